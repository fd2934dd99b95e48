import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

/// One upstream test vector from `shared/data/ble/vectors/*.json`, with the reference decoder's expectation.
struct SharedVector: Sendable, CustomTestStringConvertible {
    /// What the vector's `expect` key says.
    enum Expectation: Sendable {
        /// These records, in order (empty: no beacon).
        case records([GoldenRecord])
        /// `[{"_note": …}]`: the bytes are not an H4 event, so nothing may come out.
        case notAnH4Event
        /// `[{"_malformed_reports": n}]`: the event announces `n` reports that a strict parser must drop.
        case droppedReports(Int)
    }

    var file: String
    var id: String
    /// `ad`, `hci_event`, `h4_raw`, `mfg_data` or `svc_data`.
    var input: String
    var bytes: [UInt8]
    /// For `svc_data`: the 16-bit service UUID the payload belongs to.
    var serviceUUID: UInt16?
    var expectation: Expectation

    var testDescription: String { "\(file): \(id)" }

    /// Every vector of every file in the shared vector folder.
    static func all() throws -> [SharedVector] {
        try SharedTestData.entries(of: "vectors").filter { $0.pathExtension == "json" }.flatMap { url in
            let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            guard let vectors = root?["vectors"] as? [[String: Any]] else {
                throw VectorFileError(file: url.lastPathComponent, problem: "no \"vectors\" list")
            }
            return try vectors.map { try SharedVector(json: $0, file: url.lastPathComponent) }
        }
    }

    init(json: [String: Any], file: String) throws {
        let id = json["id"] as? String ?? "(no id)"
        func problem(_ text: String) -> VectorFileError { VectorFileError(file: file, problem: "\(id): \(text)") }
        guard let input = json["input"] as? String else { throw problem("no input kind") }
        guard let hex = json["hex"] as? String, let bytes = HexDigits.bytes(hex) else { throw problem("bad hex") }
        guard let expect = json["expect"] as? [[String: Any]] else { throw problem("no expect list") }
        var serviceUUID: UInt16?
        switch json["service_uuid"] {
        case let number as NSNumber:
            serviceUUID = number.uint16Value
        case let text as String:
            let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
            guard let value = UInt16(digits, radix: 16) else { throw problem("bad service_uuid \(text)") }
            serviceUUID = value
        default:
            serviceUUID = nil
        }
        let expectation: Expectation
        if expect.count == 1, expect[0]["_note"] != nil {
            expectation = .notAnH4Event
        } else if expect.count == 1, let count = expect[0]["_malformed_reports"] as? Int {
            expectation = .droppedReports(count)
        } else {
            expectation = .records(
                try expect.map {
                    guard let record = GoldenFields.record(fromJSON: $0) else { throw problem("unreadable expect record") }
                    return record
                })
        }
        self.file = file
        self.id = id
        self.input = input
        self.bytes = bytes
        self.serviceUUID = serviceUUID
        self.expectation = expectation
    }
}

struct VectorFileError: Error, CustomStringConvertible {
    var file: String
    var problem: String
    var description: String { "\(file): \(problem)" }
}

@Suite("Shared upstream vectors decode as the reference decoder says")
struct SharedVectorTests {
    @Test("the shared vector folder holds vector files, each with vectors")
    func vectorFolderIsPopulated() throws {
        let vectors = try SharedVector.all()
        #expect(Set(vectors.map(\.file)).count >= 1)
        #expect(vectors.count >= 10)
        #expect(vectors.contains { if case .records(let records) = $0.expectation { !records.isEmpty } else { false } })
    }

    @Test("each vector gives exactly its expected records", arguments: try SharedVector.all())
    func vectorMatchesExpectation(_ vector: SharedVector) throws {
        switch vector.expectation {
        case .records(let expected):
            let actual = try decode(vector)
            #expect(actual.count == expected.count, "number of beacon frames")
            for (index, (want, got)) in zip(expected, actual).enumerated() {
                #expect(want == got, "frame \(index + 1): \(GoldenFields.difference(expected: want, actual: got))")
            }
        case .notAnH4Event:
            #expect(vector.bytes.first != HCIEventParser.h4EventIndicator, "the note says the first byte is not 0x04")
            #expect(HCIEventParser.reports(inH4Packet: vector.bytes).isEmpty)
        case .droppedReports(let count):
            let summary = vector.bytes.withUnsafeBytes { bytes in
                HCIEventParser.forEachReport(inH4Packet: bytes) { _, _ in
                    Issue.record("a report of a malformed event was delivered")
                }
            }
            #expect(summary == HCIEventParser.Summary(deliveredReports: 0, droppedReports: count))
        }
    }

    /// Decodes the vector's bytes as its `input` kind says, into golden records.
    private func decode(_ vector: SharedVector) throws -> [GoldenRecord] {
        switch vector.input {
        case "ad":
            return BeaconFrameDecoder.frames(inAdvertisingData: vector.bytes).map(GoldenFields.of)
        case "mfg_data":
            let structure = [UInt8(vector.bytes.count + 1), AdvertisingDataStructures.manufacturerSpecificData] + vector.bytes
            return BeaconFrameDecoder.frames(inAdvertisingData: structure).map(GoldenFields.of)
        case "svc_data":
            let uuid = try #require(vector.serviceUUID, "svc_data needs a service_uuid")
            let structure =
                [
                    UInt8(vector.bytes.count + 3), AdvertisingDataStructures.serviceData16,
                    UInt8(truncatingIfNeeded: uuid), UInt8(uuid >> 8),
                ] + vector.bytes
            return BeaconFrameDecoder.frames(inAdvertisingData: structure).map(GoldenFields.of)
        case "hci_event", "h4_raw":
            return HCIEventParser.reports(inH4Packet: vector.bytes).flatMap { report in
                BeaconFrameDecoder.frames(inAdvertisingData: report.data).map { frame in
                    GoldenFields.of(report.header).merging(GoldenFields.of(frame)) { _, frameValue in frameValue }
                }
            }
        default:
            Issue.record("unknown input kind \(vector.input)")
            return []
        }
    }
}
