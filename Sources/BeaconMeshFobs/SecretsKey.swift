import Crypto
import Foundation

/// The config's `secretsKeyFile`: the 32-byte key under which members' fob identity keys are kept in the registry,
/// each sealed with AES-256-GCM (swift-crypto: never our own) and bound to its member's id, so a sealed key copied to
/// another member does not open. The file holds the 32 bytes themselves (`head -c 32 /dev/urandom`), or their 64 hex
/// digits (`openssl rand -hex 32`); the key never appears in a description or an error.
public struct SecretsKey: Sendable {
    private let key: SymmetricKey

    /// Why a secrets key file or a sealed key cannot be used, in one line that never shows a key.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The key of 32 bytes; `nil` for another length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        key = SymmetricKey(data: bytes)
    }

    /// The key in the file at `path`: 32 bytes, or 64 hex digits (a final line break allowed).
    public init(contentsOf path: String) throws(Failure) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "\(path) cannot be read")
        }
        var bytes = [UInt8](data)
        if bytes.count != 32 {
            while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
            if bytes.count == 64, let decoded = Self.hexBytes(bytes) { bytes = decoded }
        }
        guard let key = SecretsKey(bytes: bytes) else {
            throw Failure(description: "\(path) must hold 32 random bytes, or their 64 hex digits (found \(data.count) bytes)")
        }
        self = key
    }

    /// `identityKey` sealed for `member`: nonce, ciphertext and tag (AES-GCM's combined form, 44 bytes for 16).
    public func seal(identityKey: [UInt8], member: String) -> [UInt8] {
        do {
            return Array(try AES.GCM.seal(identityKey, using: key, authenticating: Array(member.utf8)).combined ?? Data())
        } catch {
            preconditionFailure("AES-GCM sealing with a 32-byte key and a 12-byte nonce failed: \(error)")
        }
    }

    /// The identity key `sealed` holds for `member`; throws when it was sealed under another key or for another member,
    /// or was altered.
    public func open(_ sealed: [UInt8], member: String) throws(Failure) -> [UInt8] {
        do {
            return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Array(member.utf8)))
        } catch {
            throw Failure(description: "the fob key of member '\(member)' does not open with this secrets key")
        }
    }

    /// The bytes of an even number of hex digits; `nil` for anything else.
    public static func hexBytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}
