/// A 128-bit identifier as iBeacon and AltBeacon carry it (16 bytes, big-endian on the air).
///
/// Stored as two integers so that hashing and comparing cost a few instructions and never allocate.
public struct BeaconUUID: Hashable, Comparable, Sendable {
    /// The first 8 bytes, most significant first.
    public var high: UInt64
    /// The last 8 bytes, most significant first.
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads 16 bytes in air order (most significant byte first) starting at `offset`.
    /// The caller guarantees `offset + 16 <= bytes.count` (checked: a violation stops the program, never reads past).
    public init(bytes: UnsafeRawBufferPointer, offset: Int) {
        precondition(offset >= 0 && offset + 16 <= bytes.count, "a UUID needs 16 bytes")
        self.init(
            high: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
            low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
    }

    /// Parses the canonical 8-4-4-4-12 form (either case); `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        var copy = String(text)
        guard let uuid = copy.withUTF8({ BeaconUUID(utf8: $0) }) else { return nil }
        self = uuid
    }

    /// Parses the canonical 8-4-4-4-12 form (either case) from UTF-8 bytes; `nil` for anything else.
    public init?(utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var nibbles = 0
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = HexDigits.value(of: byte) else { return nil }
            if nibbles < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            nibbles += 1
        }
        self.init(high: high, low: low)
    }

    /// The 16 bytes in air order.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }

    public static func < (lhs: BeaconUUID, rhs: BeaconUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

extension BeaconUUID: CustomStringConvertible {
    /// Lower-case 8-4-4-4-12, as beacon keys spell it.
    public var description: String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { bytes in
            HexDigits.write(high >> 32, digits: 8, into: bytes, at: 0)
            bytes[8] = UInt8(ascii: "-")
            HexDigits.write(high >> 16 & 0xFFFF, digits: 4, into: bytes, at: 9)
            bytes[13] = UInt8(ascii: "-")
            HexDigits.write(high & 0xFFFF, digits: 4, into: bytes, at: 14)
            bytes[18] = UInt8(ascii: "-")
            HexDigits.write(low >> 48, digits: 4, into: bytes, at: 19)
            bytes[23] = UInt8(ascii: "-")
            HexDigits.write(low & 0xFFFF_FFFF_FFFF, digits: 12, into: bytes, at: 24)
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
