/// The 10-byte namespace of an Eddystone-UID frame, spelled as 20 lower-case hex digits.
public struct EddystoneNamespace: Hashable, Sendable {
    /// The first 8 bytes, most significant first.
    public var high: UInt64
    /// The last 2 bytes, most significant first.
    public var low: UInt16

    public init(high: UInt64, low: UInt16) {
        self.high = high
        self.low = low
    }

    /// Reads 10 bytes in air order starting at `offset`; the caller guarantees `offset + 10 <= bytes.count`.
    @inlinable
    public init(bytes: UnsafeRawBufferPointer, offset: Int) {
        var high: UInt64 = 0
        for index in 0..<8 { high = high << 8 | UInt64(bytes[offset + index]) }
        self.init(high: high, low: UInt16(bytes[offset + 8]) << 8 | UInt16(bytes[offset + 9]))
    }
}

extension EddystoneNamespace: CustomStringConvertible {
    /// 20 lower-case hex digits, as in the beacon key.
    public var description: String {
        HexDigits.string(high, digits: 16) + HexDigits.string(UInt64(low), digits: 4)
    }
}

/// The 6-byte instance of an Eddystone-UID frame, spelled as 12 lower-case hex digits.
public struct EddystoneInstance: Hashable, Sendable {
    /// The 6 bytes in the low 48 bits, most significant first.
    public var value: UInt64

    public init(value: UInt64) {
        self.value = value & 0xFFFF_FFFF_FFFF
    }

    /// Reads 6 bytes in air order starting at `offset`; the caller guarantees `offset + 6 <= bytes.count`.
    @inlinable
    public init(bytes: UnsafeRawBufferPointer, offset: Int) {
        var value: UInt64 = 0
        for index in 0..<6 { value = value << 8 | UInt64(bytes[offset + index]) }
        self.value = value
    }
}

extension EddystoneInstance: CustomStringConvertible {
    /// 12 lower-case hex digits, as in the beacon key.
    public var description: String {
        HexDigits.string(value, digits: 12)
    }
}
