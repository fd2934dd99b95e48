/// Builds the H4 bytes of an LE Advertising Report event (`04 3E len 02 01 …`) with one report, as a controller
/// sends it: for simulated scanners, tests and benchmarks that must go through the same parser as the radio.
public enum LEAdvertisingReportEvent {
    /// One legacy report of `eventType` (0 ADV_IND … 4 SCAN_RSP) from `address` with `data` (at most 31 bytes).
    public static func make(
        eventType: UInt8 = 0x03, addressType: UInt8 = 0x01, address: BluetoothAddress, rssi: Int8, data: [UInt8]
    ) -> [UInt8] {
        let advertisingData = Array(data.prefix(31))
        var packet: [UInt8] = [0x04, 0x3E, UInt8(12 + advertisingData.count), 0x02, 0x01, eventType, addressType]
        for index in 0..<6 { packet.append(UInt8(truncatingIfNeeded: address.value >> (8 * UInt64(index)))) }
        packet.append(UInt8(advertisingData.count))
        packet += advertisingData
        packet.append(UInt8(bitPattern: rssi))
        return packet
    }
}
