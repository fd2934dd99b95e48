import BeaconMeshCore
import Foundation
import Testing

@testable import BeaconMeshCoordinator

/// A store's `references:` (issue 51 item 4): fixed beacons placed in its departments.
@Suite("References: fixed beacons placed in a store's departments")
struct ReferenceTests {
    static let fob = "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:7"
    static let yaml = """
        stores:
          - id: 1
            departments: [{id: 10}, {id: 20}]
            references:
              - {beacon: "\(fob)", department: 20}
          - id: 2
            departments: [{id: 10}]
        """

    static func parse(_ yaml: String) throws -> CoordinatorConfiguration {
        try CoordinatorConfiguration.parse(yaml: yaml, file: "c.yaml", defaultID: "x")
    }

    @Test("a reference names a beacon and a department of its store, and its line")
    func parses() throws {
        let configuration = try Self.parse(Self.yaml)
        let reference = try #require(configuration.stores[0].references.first)
        #expect(reference.beacon == BeaconKey(Self.fob))
        #expect(reference.department == 20)
        #expect(reference.line == 5)
        #expect(configuration.stores[1].references.isEmpty)
    }

    @Test(
        "bad references exit 2 naming the line: a department the store lacks, a key that is not one, a beacon listed twice",
        arguments: [
            ("department: 20", "department: 30", "c.yaml:5: stores[0].references[0]: store 1 has no department 30"),
            ("\(fob)", "ibeacon:nope", "c.yaml:5: stores[0].references[0].beacon 'ibeacon:nope' is not a beacon key"),
            (
                "departments: [{id: 10}]", "departments: [{id: 10}]\n    references: [{beacon: \"\(fob)\", department: 10}]",
                "c.yaml:8: \(BeaconKey(fob)!) is a reference of store 1 already"
            ),
        ])
    func refused(replacing: String, with: String, message: String) {
        let yaml = Self.yaml.replacingOccurrences(of: replacing, with: with)
        #expect {
            try Self.parse(yaml)
        } throws: { error in
            "\(error)".hasPrefix(message) && !"\(error)".contains("\n")
        }
    }

    @Test("references are sampled every 10 s in their department, only for stores decided here and heard by a node")
    func samples() throws {
        let configuration = try Self.parse(Self.yaml)
        var references = ReferenceSamples(stores: configuration.stores)
        let beacon = try #require(BeaconKey(Self.fob))
        let heard = [SurveyNode(department: 20, node: "a"): -61.0]
        let start = Timestamp(milliseconds: 1_000_000)
        var deciding = true
        var taken: [SurveySample] = []
        for second in 0..<30 {
            taken += references.samples(
                at: start + .seconds(second), deciding: { _ in deciding },
                readings: { key, store in key == beacon && store == 1 ? heard : nil })
            if second == 15 { deciding = false }
        }
        #expect(taken.map(\.at) == [start, start + .seconds(10)])
        #expect(taken.allSatisfy { $0.department == 20 && $0.store == 1 && $0.readings == heard && $0.beacon == beacon })
    }
}
