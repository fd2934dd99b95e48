import BeaconMeshBLE
import BeaconMeshCaptures
import Foundation
import Testing

/// btsnoop bytes built by hand, independently of `BTSnoopWriter`.
enum BTSnoopBytes {
    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func header(version: UInt32 = 1, datalink: UInt32 = 1002) -> [UInt8] {
        Array("btsnoop\0".utf8) + bigEndian(version) + bigEndian(datalink)
    }

    /// A record; `timestamp` is the raw on-disk value (µs since 0000-01-01).
    static func record(_ packet: [UInt8], flags: UInt32, drops: UInt32 = 0, timestamp: UInt64, originalLength: Int? = nil)
        -> [UInt8]
    {
        bigEndian(UInt32(originalLength ?? packet.count)) + bigEndian(UInt32(packet.count)) + bigEndian(flags)
            + bigEndian(drops) + bigEndian(UInt32(timestamp >> 32)) + bigEndian(UInt32(timestamp & 0xFFFF_FFFF)) + packet
    }

    /// 2021-02-01 03:27:59.789349 UTC on disk, and as Unix microseconds.
    static let rawTimestamp: UInt64 = 0x00DC_DDB3_0F2F_8000 + 1_612_150_079_789_349
    static let unixMicroseconds: Int64 = 1_612_150_079_789_349
}

@Suite("btsnoop reader")
struct BTSnoopReaderTests {
    private let event: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]

    @Test("datalink 1002 records come out in order with Unix timestamps, 1-based frame numbers and H4 bytes")
    func readsH4Records() throws {
        let directory = try TemporaryDirectory()
        let command: [UInt8] = [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00]
        let path = try directory.file(
            "h4.log",
            bytes: BTSnoopBytes.header()
                + BTSnoopBytes.record(command, flags: 2, timestamp: BTSnoopBytes.rawTimestamp)
                + BTSnoopBytes.record(event, flags: 3, drops: 7, timestamp: BTSnoopBytes.rawTimestamp + 1, originalLength: 9))
        let reader = try BTSnoopReader(path: path)
        #expect(reader.datalink == .h4)
        #expect(
            try reader.next()
                == BTSnoopRecord(
                    frameNumber: 1, timestampMicroseconds: BTSnoopBytes.unixMicroseconds, originalLength: 6, flags: 2,
                    cumulativeDrops: 0, packet: command))
        #expect(
            try reader.next()
                == BTSnoopRecord(
                    frameNumber: 2, timestampMicroseconds: BTSnoopBytes.unixMicroseconds + 1, originalLength: 9, flags: 3,
                    cumulativeDrops: 7, packet: event))
        #expect(try reader.next() == nil)
        #expect(try reader.next() == nil)
    }

    @Test(
        "datalink 1001 packets get their H4 indicator from the flags",
        arguments: [
            (UInt32(3), UInt8(0x04)),  // event, received
            (2, 0x01),  // command, sent
            (0, 0x02),  // ACL data, sent
            (1, 0x02),  // ACL data, received
        ])
    func hciDatalinkIndicator(flags: UInt32, indicator: UInt8) throws {
        let directory = try TemporaryDirectory()
        let body: [UInt8] = [0x3E, 0x02, 0x02, 0x00]
        let path = try directory.file(
            "hci.log",
            bytes: BTSnoopBytes.header(datalink: 1001)
                + BTSnoopBytes.record(body, flags: flags, timestamp: BTSnoopBytes.rawTimestamp))
        let records = try BTSnoopReader.readAll(path: path)
        #expect(records.map(\.packet) == [[indicator] + body])
        #expect(records.first?.originalLength == body.count + 1)
    }

    @Test(
        "a file that is not a readable btsnoop capture fails with one line naming the file and the problem",
        arguments: [
            ("empty", [UInt8](), "is not a btsnoop capture: the file is empty"),
            ("short", Array("btsnoop".utf8), "is not a btsnoop capture: it is 7 bytes long, shorter than the 16-byte btsnoop header"),
            (
                "pcap", [0xD4, 0xC3, 0xB2, 0xA1] + [UInt8](repeating: 0, count: 20),
                "is not a btsnoop capture: it does not start with \"btsnoop\""
            ),
            ("v2", BTSnoopBytes.header(version: 2), "is btsnoop version 2; only version 1 can be read"),
            (
                "bcsp", BTSnoopBytes.header(datalink: 1003),
                "holds btsnoop datalink 1003; only 1001 (HCI) and 1002 (HCI UART/H4) can be read"
            ),
        ] as [(String, [UInt8], String)])
    func notBTSnoop(name: String, bytes: [UInt8], message: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file(name, bytes: bytes)
        let error = try #require(throws: BTSnoopError.self) { try BTSnoopReader(path: path) }
        #expect(error.path == path)
        #expect(error.description == path + " " + message)
        #expect(!error.description.contains("\n"))
    }

    @Test("a missing file fails naming the file and the system's reason")
    func missingFile() throws {
        let path = "/nonexistent-beaconmesh/btsnoop_hci.log"
        let error = try #require(throws: BTSnoopError.self) { try BTSnoopReader(path: path) }
        #expect(error.problem == .cannotOpen(errno: ENOENT))
        #expect(error.description == "cannot open \(path): No such file or directory")
    }

    @Test("a file cut inside a record gives every complete record, then names the record that is cut off")
    func truncatedFile() throws {
        let directory = try TemporaryDirectory()
        let complete = BTSnoopBytes.header() + BTSnoopBytes.record(event, flags: 3, timestamp: BTSnoopBytes.rawTimestamp)
        let second = BTSnoopBytes.record(event, flags: 3, timestamp: BTSnoopBytes.rawTimestamp)
        for cut in 1..<second.count {
            let path = try directory.file("cut\(cut).log", bytes: complete + second.prefix(cut))
            let reader = try BTSnoopReader(path: path)
            #expect(try reader.next()?.packet == event)
            let error = try #require(throws: BTSnoopError.self) { try reader.next() }
            let needed = cut < 24 ? 24 : second.count
            #expect(error.problem == .truncatedRecord(frameNumber: 2, byteOffset: complete.count, needed: needed, available: cut))
            #expect(
                error.description == "\(path) is truncated: record 2 at byte \(complete.count) needs \(needed) bytes "
                    + "but the file ends after \(cut)")
        }
    }

    @Test("a record claiming an impossible length is reported as damage, not allocated")
    func oversizedRecord() throws {
        let directory = try TemporaryDirectory()
        var record = BTSnoopBytes.record(event, flags: 3, timestamp: BTSnoopBytes.rawTimestamp)
        record.replaceSubrange(4..<8, with: BTSnoopBytes.bigEndian(0x7FFF_FFFF))
        let path = try directory.file("damaged.log", bytes: BTSnoopBytes.header() + record)
        let error = try #require(throws: BTSnoopError.self) { try BTSnoopReader.readAll(path: path) }
        #expect(error.problem == .oversizedRecord(frameNumber: 1, byteOffset: 16, includedLength: 0x7FFF_FFFF))
    }

    @Test(
        "packets lent in place (both datalinks, records straddling read chunks) equal the records read one by one, into one chunk buffer",
        arguments: [UInt32(1001), 1002])
    func lentPacketsMatchRecords(datalink: UInt32) throws {
        let directory = try TemporaryDirectory()
        var bytes = BTSnoopBytes.header(datalink: datalink)
        var expected: [HCIEventPacket] = []
        for index in 0..<5_000 {  // about 200 kB: several 64 kB reads, records cut at their edges
            let body: [UInt8] = (0..<(10 + index % 31)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
            let packet = datalink == 1002 ? [0x04] + body : body
            bytes += BTSnoopBytes.record(packet, flags: 3, timestamp: BTSnoopBytes.rawTimestamp + UInt64(index))
            expected.append(HCIEventPacket(bytes: [0x04] + body, timestampMicroseconds: BTSnoopBytes.unixMicroseconds + Int64(index)))
        }
        let path = try directory.file("lent.log", bytes: bytes)
        let records = try BTSnoopReader.readAll(path: path)
        let reader = try BTSnoopReader(path: path)
        var chunk = HCIEventChunk()
        while try reader.nextPacket({ chunk.append($0, timestampMicroseconds: $1) }) {}
        #expect(chunk.count == 5_000)
        #expect(chunk.packets == expected)
        #expect(records.map { HCIEventPacket(bytes: $0.packet, timestampMicroseconds: $0.timestampMicroseconds) } == expected)
    }

    @Test("a record larger than the read chunk is read whole")
    func largeRecord() throws {
        let directory = try TemporaryDirectory()
        let acl = [0x02] + (0..<65_000).map { UInt8(truncatingIfNeeded: $0) }
        let path = try directory.file(
            "large.log",
            bytes: BTSnoopBytes.header()
                + BTSnoopBytes.record(acl, flags: 1, timestamp: BTSnoopBytes.rawTimestamp)
                + BTSnoopBytes.record(acl, flags: 0, timestamp: BTSnoopBytes.rawTimestamp))
        #expect(try BTSnoopReader.readAll(path: path).map(\.packet) == [acl, acl])
    }

    // Time is not checked for order: real captures step back now and then (NovaX-Escooter frame 2662, by 37 µs).
    @Test(
        "every shared capture reads to its end, record by record, with consecutive frame numbers",
        arguments: try SharedCapture.all())
    func sharedCaptureReadsCleanly(_ capture: SharedCapture) throws {
        let records = try BTSnoopReader.readAll(path: capture.capture.path)
        #expect(!records.isEmpty)
        #expect(records.map(\.frameNumber) == Array(1...records.count))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: capture.capture.path)[.size] as? Int)
        #expect(16 + records.reduce(0) { $0 + 24 + $1.packet.count } == size)
    }
}
