import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

/// One shared capture and its golden output (`<capture>.expected.jsonl` beside it).
struct SharedCapture: Sendable, CustomTestStringConvertible {
    var capture: URL
    var golden: URL

    var testDescription: String { capture.deletingLastPathComponent().lastPathComponent + "/" + capture.lastPathComponent }

    /// Every capture under `shared/data/ble/captures/*/` that has a golden file, in folder order.
    static func all() throws -> [SharedCapture] {
        try SharedTestData.entries(of: "captures").flatMap { folder in
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return files.sorted().compactMap { name -> SharedCapture? in
                guard files.contains(name + ".expected.jsonl") else { return nil }
                return SharedCapture(
                    capture: folder.appendingPathComponent(name),
                    golden: folder.appendingPathComponent(name + ".expected.jsonl"))
            }
        }
    }

    /// The golden lines, in order.
    func goldenRecords() throws -> [GoldenRecord] {
        let text = try String(contentsOf: golden, encoding: .utf8)
        return try text.split(separator: "\n").filter { !$0.isEmpty }.enumerated().map { index, line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let record = GoldenFields.record(fromJSON: object)
            else { throw GoldenLineError(file: golden.path, line: index + 1) }
            return record
        }
    }
}

struct GoldenLineError: Error, CustomStringConvertible {
    var file: String
    var line: Int
    var description: String { "\(file):\(line) is not a golden JSON object" }
}

@Suite("Shared captures reproduce their golden files")
struct CaptureGoldenTests {
    @Test("the shared capture folder holds captures with golden files")
    func captureFolderIsPopulated() throws {
        #expect(try !SharedCapture.all().isEmpty)
    }

    @Test(
        "btsnoop reader + HCI parser + frame decoder give exactly the golden lines, in order",
        arguments: try SharedCapture.all())
    func captureMatchesGolden(_ capture: SharedCapture) throws {
        let expected = try capture.goldenRecords()
        #expect(!expected.isEmpty, "a golden file without beacon frames tests nothing")
        let actual = try Self.decode(capturePath: capture.capture.path)
        #expect(actual.count == expected.count, "number of beacon frames")
        var mismatches = 0
        for (index, (want, got)) in zip(expected, actual).enumerated() where want != got {
            mismatches += 1
            guard mismatches <= 5 else { break }
            Issue.record("line \(index + 1): \(GoldenFields.difference(expected: want, actual: got))")
        }
    }

    /// Every beacon frame of a capture, as golden records.
    static func decode(capturePath: String) throws -> [GoldenRecord] {
        let reader = try BTSnoopReader(path: capturePath)
        var records: [GoldenRecord] = []
        while let record = try reader.next() {
            _ = record.packet.withUnsafeBytes { packet in
                HCIEventParser.forEachReport(inH4Packet: packet) { header, data in
                    BeaconFrameDecoder.forEachFrame(inAdvertisingData: data) { frame in
                        var line = GoldenFields.of(header).merging(GoldenFields.of(frame)) { _, frameValue in frameValue }
                        line["frame"] = GoldenValue(record.frameNumber)
                        line["ts"] = GoldenValue(record.timestampMicroseconds)
                        records.append(line)
                    }
                }
            }
        }
        return records
    }
}
