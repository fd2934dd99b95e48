import BeaconMeshCore

/// Apple Continuity adverts as phones, laptops and earbuds send them (Nearby Info, Handoff, Nearby Action, Proximity
/// Pairing under Apple's company id, from resolvable private addresses): most of what a scanner in a busy store hears,
/// and drops, since none is a beacon.
public enum ContinuityNoise {
    /// How many different reports a capture cycles through.
    public static let distinctReports = 251

    /// `count` LE Advertising Report events (H4 bytes), the same ones every time (a fixed pseudo-random sequence).
    public static func reports(count: Int) -> [[UInt8]] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {  // xorshift64*
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
        // Continuity message types and their payload lengths.
        let kinds: [(type: UInt8, length: Int)] = [(0x10, 5), (0x0C, 14), (0x0F, 9), (0x07, 19)]
        return (0..<max(0, count)).map { index in
            let kind = kinds[index % kinds.count]
            // Flags, then manufacturer data: Apple (0x004C), the message's type and length, its bytes.
            var data: [UInt8] = [0x02, 0x01, 0x1A, UInt8(kind.length + 5), 0xFF, 0x4C, 0x00, kind.type, UInt8(kind.length)]
            for _ in 0..<kind.length { data.append(UInt8(truncatingIfNeeded: next())) }
            let address = BluetoothAddress(value: 0x4000_0000_0000 | (next() & 0x3FFF_FFFF_FFFF))
            return LEAdvertisingReportEvent.make(
                eventType: 0x00, address: address, rssi: Int8(-70 - Int(next() % 20)), data: data)
        }
    }
}
