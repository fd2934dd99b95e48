import BeaconMeshCore
import Foundation

/// Writes btsnoop captures (v1, datalink 1002 H4) of iBeacon advertising reports, of any size, for replay tests.
///
/// Record `i` is an LE Advertising Report from beacon `i % beacons` (iBeacon `uuid`, major `major`, minor = the
/// beacon's number), `interval` after record `i - 1`. With `noise` N, only every (N + 1)th record is an iBeacon's (the
/// `k`th of them from beacon `k % beacons`) and the N between are Apple Continuity adverts, as the phones and earbuds
/// around a store send them: not beacons, so a scanner reads and drops them. The format is written here by hand
/// (BeaconMeshBLE, which has a writer, links the GPL libbluetooth and is the scanner's alone); `SyntheticCaptureTests`
/// in the BLE tests check it byte for byte against `BTSnoopWriter` and read it back with `BTSnoopReader`.
public enum SyntheticCapture {
    /// Writes `adverts` records to `path`, streaming (constant memory), and returns the file size in bytes.
    /// `iBeaconAdverts(of:noise:)` of them are iBeacons'.
    @discardableResult
    public static func write(
        to path: String, adverts: Int, beacons: Int = 10, uuid: String = "0cf052c2-97ca-407c-84f8-b62aac4e9020",
        major: UInt16 = 1, interval: Duration = .microseconds(100),
        startMicroseconds: Int64 = 1_763_769_600_000_000, noise: Int = 0
    ) throws -> Int {
        guard let beaconUUID = BeaconUUID(uuid) else { throw TestSupportError("not a UUID: \(uuid)") }
        let beaconCount = max(1, min(beacons, Int(UInt16.max)))
        // One ready record per beacon; only the timestamp changes from one record to the next.
        let templates: [[UInt8]] = (0..<beaconCount).map { number in
            let frame = IBeaconAdvertisingData(uuid: beaconUUID, major: major, minor: UInt16(number), measuredPower: -59)
            return record(
                LEAdvertisingReportEvent.make(
                    address: BluetoothAddress(value: 0xC0_FFEE_00_0000 + UInt64(number)), rssi: -60, data: frame.bytes))
        }
        let noiseTemplates = ContinuityNoise.reports(count: noise > 0 ? ContinuityNoise.distinctReports : 0).map(record)
        let period = max(0, noise) + 1
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else { throw TestSupportError("cannot create \(path)") }
        defer { try? file.close() }

        var buffer: [UInt8] = Array("btsnoop\0".utf8)
        appendBigEndian(1, to: &buffer)
        appendBigEndian(1002, to: &buffer)
        var size = 0
        let step = interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000
        let epochOffset: Int64 = 0x00DC_DDB3_0F2F_8000  // btsnoop counts microseconds from year 0
        buffer.reserveCapacity(1 << 20)
        for index in 0..<adverts {
            let start = buffer.count
            if index % period == 0 {
                buffer += templates[index / period % beaconCount]
            } else {
                buffer += noiseTemplates[(index - index / period - 1) % noiseTemplates.count]
            }
            let timestamp = UInt64(bitPattern: startMicroseconds + Int64(index) * step + epochOffset)
            for byte in 0..<8 {
                buffer[start + 16 + byte] = UInt8(truncatingIfNeeded: timestamp >> (8 * UInt64(7 - byte)))
            }
            if buffer.count >= 1 << 20 {
                try file.write(contentsOf: buffer)
                size += buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
        }
        try file.write(contentsOf: buffer)
        return size + buffer.count
    }

    /// Writes one record per report (an advertiser's address and its AD data, heard at `rssi`), `interval` apart from
    /// `startMicroseconds` on; returns the file size in bytes. For captures of chosen adverts (a fob's EID frames).
    @discardableResult
    public static func write(
        to path: String, reports: [(address: UInt64, data: [UInt8])], rssi: Int8 = -60, interval: Duration = .milliseconds(100),
        startMicroseconds: Int64 = 1_763_769_600_000_000
    ) throws -> Int {
        var bytes: [UInt8] = Array("btsnoop\0".utf8)
        appendBigEndian(1, to: &bytes)
        appendBigEndian(1002, to: &bytes)
        let step = interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000
        let epochOffset: Int64 = 0x00DC_DDB3_0F2F_8000  // btsnoop counts microseconds from year 0
        for (index, report) in reports.enumerated() {
            let start = bytes.count
            bytes += record(LEAdvertisingReportEvent.make(address: BluetoothAddress(value: report.address), rssi: rssi, data: report.data))
            let timestamp = UInt64(bitPattern: startMicroseconds + Int64(index) * step + epochOffset)
            for byte in 0..<8 { bytes[start + 16 + byte] = UInt8(truncatingIfNeeded: timestamp >> (8 * UInt64(7 - byte))) }
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { throw TestSupportError("cannot create \(path)") }
        return bytes.count
    }

    /// The AD data of an Eddystone-EID fob advertising `ephemeralID` (flags, the Eddystone service UUID, and the
    /// service data `AA FE 30 tx id…`); `extra` bytes after the id make a malformed frame.
    public static func eddystoneEIDAdvert(ephemeralID: UInt64, txPower: Int8 = -20, extra: [UInt8] = []) -> [UInt8] {
        let id = (0..<8).map { UInt8(truncatingIfNeeded: ephemeralID >> (8 * UInt64(7 - $0))) }
        let serviceData: [UInt8] = [0xAA, 0xFE, 0x30, UInt8(bitPattern: txPower)] + id + extra
        return [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, UInt8(serviceData.count + 1), 0x16] + serviceData
    }

    /// How many of `adverts` records are iBeacons' when `noise` Continuity adverts come between two of them.
    public static func iBeaconAdverts(of adverts: Int, noise: Int) -> Int {
        let period = max(0, noise) + 1
        return (max(0, adverts) + period - 1) / period
    }

    /// `packet` as a btsnoop record, received, with its timestamp left zero (set per record).
    private static func record(_ packet: [UInt8]) -> [UInt8] {
        var record: [UInt8] = []
        appendBigEndian(UInt32(packet.count), to: &record)  // original length
        appendBigEndian(UInt32(packet.count), to: &record)  // included length
        appendBigEndian(0x3, to: &record)  // received, command or event
        appendBigEndian(0, to: &record)  // cumulative drops
        appendBigEndian(0, to: &record)  // timestamp, high word (set per record)
        appendBigEndian(0, to: &record)  // timestamp, low word
        return record + packet
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
