/// Lower-case hexadecimal spelling and reading, without Foundation.
public enum HexDigits {
    /// The value of one ASCII hex digit (either case), or `nil`.
    @inlinable
    public static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// `value` as exactly `digits` lower-case hex digits (leading zeros kept, high digits cut).
    public static func string(_ value: UInt64, digits: Int) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digits) { bytes in
            write(value, digits: digits, into: bytes, at: 0)
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Writes `value` as `digits` lower-case hex digits into `bytes` starting at `offset`.
    @inlinable
    public static func write(_ value: UInt64, digits: Int, into bytes: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        var rest = value
        for index in stride(from: offset + digits - 1, through: offset, by: -1) {
            let nibble = UInt8(truncatingIfNeeded: rest & 0xF)
            bytes[index] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble
            rest >>= 4
        }
    }

    /// Bytes as lower-case hex, two digits each.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes { text += string(UInt64(byte), digits: 2) }
        return text
    }

    /// Reads an even-length hex string (whitespace ignored) into bytes; `nil` on any other character.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        var result: [UInt8] = []
        var pending: UInt8?
        for byte in text.utf8 {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") { continue }
            guard let nibble = value(of: byte) else { return nil }
            if let high = pending {
                result.append(high << 4 | nibble)
                pending = nil
            } else {
                pending = nibble
            }
        }
        return pending == nil ? result : nil
    }
}
