import BeaconMeshCore
import Crypto
import CryptoExtras

/// One Eddystone-EID fob's rotating ids, computed as Google's specification says
/// (github.com/google/eddystone, `eddystone-eid/eid-computation.md`), with AES-128 from swift-crypto:
/// - the temporary key is AES-128 under the fob's 16-byte identity key of the block
///   `00 × 11 | FF | 00 00 | the top 16 bits of the 32-bit counter`;
/// - the ephemeral id is the first 8 bytes of AES-128 under that temporary key of the block
///   `00 × 11 | K | the counter with its low K bits cleared (4 bytes, big-endian)`;
/// so the id changes every 2^K seconds of the fob's counter. The identity key never leaves this value: it has no
/// description that shows it.
public struct EddystoneEID: Sendable {
    /// The rotation exponent K (0–15): a new id every 2^K seconds.
    public let rotationExponent: UInt8
    private let identityKey: SymmetricKey

    /// A fob with this 16-byte identity key and rotation exponent; `nil` for a key of another length or a K over 15.
    public init?(identityKey: [UInt8], rotationExponent: UInt8) {
        guard identityKey.count == 16, rotationExponent <= 15 else { return nil }
        self.identityKey = SymmetricKey(data: identityKey)
        self.rotationExponent = rotationExponent
    }

    /// Seconds between two ids (2^K).
    public var rotationSeconds: UInt32 { 1 << UInt32(rotationExponent) }

    /// The first counter of the window holding `counter` (its low K bits cleared).
    public func windowStart(of counter: UInt32) -> UInt32 { counter & ~(rotationSeconds - 1) }

    /// The id the fob advertises while its counter reads `counter`.
    public func ephemeralID(counter: UInt32) -> UInt64 {
        Self.ephemeralID(identityKey: identityKey, rotationExponent: rotationExponent, counter: counter)
    }

    /// The id a fob with `identityKey` and K = `rotationExponent` advertises while its counter reads `counter`.
    static func ephemeralID(identityKey: SymmetricKey, rotationExponent: UInt8, counter: UInt32) -> UInt64 {
        let temporaryKey = Self.encrypt(
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0, 0, UInt8(counter >> 24), UInt8(truncatingIfNeeded: counter >> 16)],
            under: identityKey)
        let window = counter & ~((1 << UInt32(rotationExponent)) - 1)
        let block = Self.encrypt(
            [
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, rotationExponent, UInt8(window >> 24), UInt8(truncatingIfNeeded: window >> 16),
                UInt8(truncatingIfNeeded: window >> 8), UInt8(truncatingIfNeeded: window),
            ], under: SymmetricKey(data: temporaryKey))
        return block.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The identity key's 16 bytes, for `EIDResolver`'s table (which keeps a chain's keys in one buffer).
    var identityKeyBytes: [UInt8] { identityKey.withUnsafeBytes { Array($0) } }

    /// The key the fob advertises while its counter reads `counter`.
    public func beaconKey(counter: UInt32) -> BeaconKey { .eddystoneEID(ephemeralID: ephemeralID(counter: counter)) }

    /// AES-128 of one 16-byte block (swift-crypto's block function: the sizes are fixed here, so it cannot fail).
    private static func encrypt(_ block: [UInt8], under key: SymmetricKey) -> [UInt8] {
        var block = block
        do {
            try AES.permute(&block, key: key)
        } catch {
            preconditionFailure("AES-128 of a 16-byte block under a 16-byte key failed: \(error)")
        }
        return block
    }
}
