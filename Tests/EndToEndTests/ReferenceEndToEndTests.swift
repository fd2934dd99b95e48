import BeaconMeshTesting
import Foundation
import Testing

/// A store's `references:` through the real coordinator (issue 51 item 4): trusted survey samples, never guests.
@Suite("References through the coordinator")
struct ReferenceEndToEndTests {
    static let reference = "ibeacon:\(Mesh.uuid):1:7"

    @Test("a reference heard in its department is counted as nobody, and becomes survey samples of that department every 10 s")
    func samplesNotGuests() async throws {
        let run = try await CoordinatorRun.start(extraConfig: "    references: [{beacon: \"\(Self.reference)\", department: 20}]")
        let presence = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/1/presence", qos: 1)
        // A guest beside it (minor 8) is counted: the snapshot does count guests.
        try await paced(50, every: .milliseconds(250)) { index in
            for minor in [7, 8] {
                try await MosquittoClients.publish(
                    port: run.broker.port, topic: "beaconmesh/v1/stores/1/departments/20/nodes/a/sightings",
                    string: Mesh.batch(store: 1, department: 20, boot: "b00t", seq: 2 * index + minor - 6, minor: minor, at: Mesh.nowMilliseconds),
                    qos: 1)
            }
        }
        let snapshots = presence.lines.compactMap(Mesh.payload(of:))
        let guests = snapshots.compactMap { (($0["occupancy"] as? [String: Any])?["20"] as? [String: Any])?["guests"] as? Int }
        #expect(guests.max() == 1, "the guest alone is counted: \(guests)")
        await run.stop()

        let show = try Mesh.program("beacon-coordinator", ["survey", "show", "--store", "1", "--db", run.directory + "/mesh.sqlite", "--json"])
        #expect(await show.waitForExit() == .exited(0), "\(show.transcript)")
        let json = try JSONSerialization.jsonObject(with: Data(show.stdoutLines.joined().utf8))
        let survey = try #require(json as? [String: Any], "\(show.transcript)")
        let samples = try #require(survey["samples"] as? [[String: Any]], "\(survey)")
        #expect(samples.count == 1, "\(samples)")
        #expect(samples.first?["department"] as? Int == 20)
        let seconds = try #require(samples.first?["seconds"] as? Int)
        #expect((1...2).contains(seconds), "12 s of sightings sampled every 10 s: \(seconds)")
        let sources = try #require(samples.first?["sources"] as? [String: Int])
        #expect(sources == ["walk": 0, "reference": seconds, "checkin": 0])
    }

    @Test("a reference that is a member's beacon exits 2 naming the config's line and the member")
    func memberBeaconRefused() async throws {
        let directory = try Mesh.temporaryDirectory()
        let config = try Mesh.writeCoordinatorConfig(
            in: directory, brokerURL: "mqtt://127.0.0.1:1", extra: "    references: [{beacon: \"ibeacon:\(Mesh.uuid):1:1\", department: 20}]")
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await coordinator.waitForExit() == .exited(2))
        let errors = coordinator.stderrLines.filter { !$0.isEmpty }
        #expect(errors.count == 1, "\(coordinator.transcript)")
        #expect(errors.first?.contains("coordinator.yaml:15:") == true, "\(errors)")
        #expect(errors.first?.contains("member 'ana'") == true, "\(errors)")
        // Refused before the members CSV was merged: the registry holds nobody.
        let list = try Mesh.program("beacon-coordinator", ["members", "list", "--db", directory + "/mesh.sqlite"])
        #expect(await list.waitForExit() == .exited(0), "\(list.transcript)")
        #expect(!list.stdoutLines.contains { $0.hasPrefix("ana") }, "\(list.stdoutLines)")
    }
}
