/// A 48-bit Bluetooth device address, spelled most significant byte first (`C4:7C:8D:6A:3E:21`).
public struct BluetoothAddress: Hashable, Sendable {
    /// The address in the low 48 bits, most significant byte first.
    public var value: UInt64

    public init(value: UInt64) {
        self.value = value & 0xFFFF_FFFF_FFFF
    }

    /// Reads 6 bytes in HCI wire order (least significant byte first) starting at `offset`.
    public init(wireBytes bytes: UnsafeRawBufferPointer, offset: Int) {
        precondition(offset >= 0 && offset + 6 <= bytes.count, "an address needs 6 bytes")
        let low = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let high = UInt64(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)))
        self.value = high << 32 | low
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case); `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.utf8.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.value = value
    }
}

extension BluetoothAddress: CustomStringConvertible {
    /// Upper-case, colon-separated, most significant byte first.
    public var description: String {
        let hex = HexDigits.string(value, digits: 12).uppercased()
        var text = ""
        for (index, character) in hex.enumerated() {
            if index > 0 && index % 2 == 0 { text.append(":") }
            text.append(character)
        }
        return text
    }
}
