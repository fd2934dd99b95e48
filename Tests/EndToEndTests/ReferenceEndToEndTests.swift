import BeaconMeshCore
import BeaconMeshRegistry
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
        try await TopicPublisher.paced(
            port: run.broker.port, topic: "beaconmesh/v1/stores/1/departments/20/nodes/a/sightings", count: 100,
            every: .milliseconds(125)
        ) { index in
            // The reference (minor 7) and the guest (minor 8) in turn.
            Mesh.batch(store: 1, department: 20, boot: "b00t", seq: index + 1, minor: 7 + index % 2, at: Mesh.nowMilliseconds)
        }
        let snapshots = presence.lines.compactMap(Mesh.payload(of:))
        let guests = snapshots.compactMap { (($0["occupancy"] as? [String: Any])?["20"] as? [String: Any])?["guests"] as? Int }
        #expect(guests.max() == 1, "the guest alone is counted: \(guests)")
        await run.stop()

        let show = try Mesh.program(
            "beacon-coordinator", ["survey", "show", "--store", "1", "--db", run.directory + "/mesh.sqlite", "--json"])
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
            in: directory, brokerURL: "mqtt://127.0.0.1:1",
            extra: "    references: [{beacon: \"ibeacon:\(Mesh.uuid):1:1\", department: 20}]")
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

extension ReferenceEndToEndTests {
    /// Samples of a walk of store 1 (each department's own node loudest) and of the reference in department 20 as
    /// the nodes heard it then: node 20/a at -60, node 10/a at -75.
    static func surveyed(until fittedAt: Int64) -> [SurveySample] {
        let sounds: [UInt16: [UInt16: Double]] = [10: [10: -58, 20: -80], 20: [10: -78, 20: -59], 30: [30: -57, 20: -82]]
        var samples: [SurveySample] = []
        for (department, heard) in sounds {
            for second in 0..<30 {
                var readings: [SurveyNode: Double] = [:]
                for (node, rssi) in heard { readings[SurveyNode(department: node, node: "a")] = rssi + Double(second % 5) - 2 }
                samples.append(
                    SurveySample(
                        store: 1, beacon: BeaconKey("ibeacon:\(Mesh.uuid):1:9")!, department: department,
                        at: Timestamp(milliseconds: fittedAt - 600_000 + Int64(department) * 10_000 + Int64(second) * 1000),
                        readings: readings))
            }
        }
        for index in 0..<12 {
            samples.append(
                SurveySample(
                    store: 1, beacon: BeaconKey(reference)!, department: 20,
                    at: Timestamp(milliseconds: fittedAt - 200_000 + Int64(index) * 10_000),
                    readings: [SurveyNode(department: 20, node: "a"): -60, SurveyNode(department: 10, node: "a"): -75], source: .reference))
        }
        return samples
    }

    @Test("a node that hears the reference 10 dB louder than in the survey is named in health's drift within a few minutes")
    func driftNamesTheNode() async throws {
        let run = try await CoordinatorRun.start(
            extraConfig: "    references: [{beacon: \"\(Self.reference)\", department: 20}]", arguments: ["--health-interval", "2s"])
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/+/health", qos: 0)
        let now = Mesh.nowMilliseconds
        let registry = try SQLiteRegistry(path: run.directory + "/mesh.sqlite")
        try registry.addSurveySamples(Self.surveyed(until: now))
        try registry.saveSurveyFit(
            try SurveyTraining(samples: registry.surveySamples(store: 1), store: 1).fit(at: Timestamp(milliseconds: now)).fit)
        // Node 10/a now hears the reference at -65: knocked, 10 dB louder than in the survey.
        let nodes = [
            try await TopicPublisher(port: run.broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings"),
            try await TopicPublisher(port: run.broker.port, topic: "beaconmesh/v1/stores/1/departments/20/nodes/a/sightings"),
        ]
        try await paced(300, every: .milliseconds(250)) { index in
            for (node, department) in zip(nodes, [10, 20]) {
                try node.send(
                    Mesh.batch(
                        store: 1, department: department, boot: "b00t", seq: index + 1, minor: 7, rssi: department == 10 ? -65 : -60,
                        at: Mesh.nowMilliseconds))
            }
        }
        for node in nodes { await node.stop() }
        let line = await health.waitForLine(timeout: .seconds(15)) { $0.contains("\"drift\":[{") }
        let payload = try #require(
            line.flatMap(Mesh.payload(of:)), "no drift in health:\n\(health.lines.suffix(2))\n\(run.coordinator.transcript)")
        let survey = try #require((payload["surveys"] as? [[String: Any]])?.first)
        let drift = try #require(survey["drift"] as? [[String: Any]])
        #expect(drift.count == 1, "\(drift)")
        #expect(drift.first?["node"] as? String == "a" && drift.first?["department"] as? Int == 10, "\(drift)")
        #expect(abs((drift.first?["db"] as? Double ?? 0) - 10) < 0.5, "\(drift)")
        #expect((survey["message"] as? String)?.contains("node a of department 10 hears the references 10.0 dB off") == true, "\(survey)")
        await run.stop()
    }
}
