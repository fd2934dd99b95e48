import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

/// The test helper that writes big captures by hand (`SyntheticCapture`) writes what `BTSnoopReader` reads and
/// what `BTSnoopWriter` would write.
@Suite("Synthetic captures")
struct SyntheticCaptureTests {
    @Test("records are iBeacon reports of the beacons in turn, spaced by the interval, byte for byte as BTSnoopWriter writes them")
    func matchesTheWriter() throws {
        let directory = try TemporaryDirectory()
        let synthetic = directory.path("synthetic.log")
        let written = directory.path("written.log")
        let size = try SyntheticCapture.write(
            to: synthetic, adverts: 5, beacons: 3, major: 9, interval: .milliseconds(2),
            startMicroseconds: 1_763_769_600_000_000)

        let uuid = try #require(BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020"))
        let writer = try BTSnoopWriter(path: written)
        for index in 0..<5 {
            let frame = IBeaconAdvertisingData(uuid: uuid, major: 9, minor: UInt16(index % 3), measuredPower: -59)
            let packet = LEAdvertisingReportEvent.make(
                address: BluetoothAddress(value: 0xC0_FFEE_00_0000 + UInt64(index % 3)), rssi: -60, data: frame.bytes)
            let outcome = packet.withUnsafeBytes { bytes in
                Result { () throws(BTSnoopError) in
                    try writer.write(h4Packet: bytes, timestampMicroseconds: 1_763_769_600_000_000 + Int64(index) * 2_000, received: true)
                }
            }
            try outcome.get()
        }
        try writer.close()
        let expected = try Data(contentsOf: URL(fileURLWithPath: written))
        #expect(try Data(contentsOf: URL(fileURLWithPath: synthetic)) == expected)
        #expect(size == expected.count)

        let reader = try BTSnoopReader(path: synthetic)
        var minors: [Int] = []
        while let record = try reader.next() {
            #expect(record.timestampMicroseconds == 1_763_769_600_000_000 + Int64(minors.count) * 2_000)
            // The report ends with the frame's minor (2 bytes), measured power and the RSSI.
            minors.append(Int(record.packet[record.packet.count - 4]) << 8 | Int(record.packet[record.packet.count - 3]))
        }
        #expect(minors == [0, 1, 2, 0, 1])
    }
}
