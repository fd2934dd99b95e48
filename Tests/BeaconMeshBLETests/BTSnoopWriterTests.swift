import BeaconMeshBLE
import BeaconMeshCaptures
import Foundation
import Testing

@Suite("btsnoop writer")
struct BTSnoopWriterTests {
    @Test("a new file starts with the btsnoop v1 header for datalink 1002 (H4)")
    func header() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("empty.log")
        try BTSnoopWriter(path: path).close()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == BTSnoopBytes.header(version: 1, datalink: 1002))
        #expect(try BTSnoopReader.readAll(path: path).isEmpty)
    }

    @Test("packets written are read back with the same bytes, times, flags and frame numbers")
    func writeThenRead() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("round-trip.log")
        let writer = try BTSnoopWriter(path: path)
        let command: [UInt8] = [0x01, 0x0B, 0x20, 0x07, 0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]
        let advert: [UInt8] = [0x04, 0x3E, 0x0C, 0x02, 0x01, 0x00, 0x01, 0x21, 0x3E, 0x6A, 0x8D, 0x7C, 0xC4, 0x00, 0xC5]
        let acl: [UInt8] = [0x02, 0x40, 0x20, 0x01, 0x00, 0xAA]
        for (index, (packet, received)) in [(command, false), (advert, true), (acl, true)].enumerated() {
            try packet.withUnsafeBytes { bytes in
                try writer.write(
                    h4Packet: bytes, timestampMicroseconds: BTSnoopBytes.unixMicroseconds + Int64(index),
                    received: received)
            }
        }
        try writer.close()
        let records = try BTSnoopReader.readAll(path: path)
        #expect(
            records == [
                BTSnoopRecord(
                    frameNumber: 1, timestampMicroseconds: BTSnoopBytes.unixMicroseconds, originalLength: command.count,
                    flags: 2, packet: command),
                BTSnoopRecord(
                    frameNumber: 2, timestampMicroseconds: BTSnoopBytes.unixMicroseconds + 1, originalLength: advert.count,
                    flags: 3, packet: advert),
                BTSnoopRecord(
                    frameNumber: 3, timestampMicroseconds: BTSnoopBytes.unixMicroseconds + 2, originalLength: acl.count,
                    flags: 1, packet: acl),
            ])
    }

    @Test("timestamps are stored as microseconds since 0000-01-01, big-endian")
    func timestampOnDisk() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("time.log")
        let writer = try BTSnoopWriter(path: path)
        try writer.write(
            BTSnoopRecord(
                frameNumber: 1, timestampMicroseconds: BTSnoopBytes.unixMicroseconds,
                originalLength: 3, flags: 3, packet: [0x04, 0x00, 0x00]))
        try writer.close()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes == BTSnoopBytes.header() + BTSnoopBytes.record([0x04, 0x00, 0x00], flags: 3, timestamp: BTSnoopBytes.rawTimestamp))
    }

    @Test(
        "rewriting a shared capture record by record reproduces the file byte for byte",
        arguments: try SharedCapture.all())
    func rewriteSharedCapture(_ capture: SharedCapture) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("copy.log")
        let writer = try BTSnoopWriter(path: path)
        let reader = try BTSnoopReader(path: capture.capture.path)
        var count = 0
        while let record = try reader.next() {
            try writer.write(record)
            count += 1
        }
        try writer.close()
        #expect(count > 0)
        let original = try Data(contentsOf: capture.capture)
        let copy = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(copy == original)
    }

    @Test("a file that cannot be created fails naming it; writing after close fails too")
    func failures() throws {
        let path = "/nonexistent-beaconmesh/record.log"
        let error = try #require(throws: BTSnoopError.self) { try BTSnoopWriter(path: path) }
        #expect(error.description == "cannot open \(path): No such file or directory")

        let directory = try TemporaryDirectory()
        let writer = try BTSnoopWriter(path: directory.path("closed.log"))
        try writer.close()
        let late = try #require(throws: BTSnoopError.self) {
            try writer.write(BTSnoopRecord(frameNumber: 1, timestampMicroseconds: 0, originalLength: 1, flags: 3, packet: [0x04]))
        }
        #expect(late.problem == .cannotWrite(errno: EBADF))
    }
}
