import BeaconMeshTesting
import Foundation
import Testing

/// A Wi-Fi drop, as a store's Pi has it: the scanner is frozen past its keep-alive, the broker publishes its
/// `offline` will, and when the scanner resumes it must say `online` again and be counted again.
@Suite("beacon-scanner frozen past its keep-alive", .serialized)
struct ScannerFreezeTests {
    static let statusTopic = "beaconmesh/v1/stores/1/departments/10/nodes/a/status"
    static let presenceTopic = "beaconmesh/v1/stores/1/presence"
    static let healthTopic = "beaconmesh/v1/coordinators/e2e/health"

    /// The latest coordinator health in `lines`: batches applied and batches dropped from offline nodes.
    static func latestHealth(_ lines: [String]) -> (batches: Int, offlineNode: Int)? {
        guard let line = lines.last(where: { Mesh.topic(of: $0) == healthTopic }), let health = Mesh.payload(of: line) else { return nil }
        let dropped = health["dropped"] as? [String: Any] ?? [:]
        return (health["batches"] as? Int ?? 0, dropped["offline-node"] as? Int ?? 0)
    }

    /// Whether a presence snapshot line shows Ana in Clothing (10) and node a of Clothing online.
    static func showsAnaWithNodeOnline(_ line: String) -> Bool {
        guard Mesh.topic(of: line) == presenceTopic, let snapshot = Mesh.payload(of: line) else { return false }
        let members = snapshot["members"] as? [[String: Any]] ?? []
        let nodes = snapshot["nodes"] as? [[String: Any]] ?? []
        let ana = members.contains { ($0["member"] as? [String: Any])?["id"] as? String == "ana" && $0["department"] as? Int == 10 }
        let node = nodes.contains { $0["department"] as? Int == 10 && $0["node"] as? String == "a" && $0["state"] as? String == "online" }
        return ana && node
    }

    @Test("after SIGSTOP past keep-alive and SIGCONT the scanner's retained status is online again and its batches count again")
    func frozenScannerComesBack() async throws {
        let broker = try await MosquittoBroker.start()
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: broker.url)
        // A guest (minor 0) and Ana (minor 1), each heard every 100 ms, for 90 s, replayed at recorded pace.
        let capture = directory + "/clothing.log"
        try SyntheticCapture.write(to: capture, adverts: 1_800, beacons: 2, interval: .milliseconds(50))

        let watch = try await MosquittoClients.subscribe(
            port: broker.port, filters: ["beaconmesh/v1/stores/1/events", Self.presenceTopic, Self.statusTopic, Self.healthTopic], qos: 1)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config, "--health-interval", "1s"])
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
        try #require(running != nil, "\(coordinator.transcript)")
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "10", "--broker", broker.url, "--source", "btsnoop:\(capture)", "--speed", "1",
            ])
        func finish() async {
            scanner.send(SIGCONT)
            _ = await scanner.stop(with: SIGTERM, timeout: .seconds(20))
            _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
            await watch.stop()
            await broker.stop()
        }

        let arrived = await watch.waitForLine(timeout: .seconds(15)) { $0.contains("\"type\":\"arrived\"") && $0.contains("\"ana\"") }
        guard arrived != nil else {
            Issue.record("Ana was never greeted:\n\(scanner.transcript)\n\(coordinator.transcript)")
            return await finish()
        }

        // Freeze past the keep-alive (10 s; the broker gives up after 15 s): the broker publishes the will.
        scanner.send(SIGSTOP)
        let will = await watch.waitForLine(timeout: .seconds(25)) {
            Mesh.topic(of: $0) == Self.statusTopic && $0.contains("\"offline\"")
        }
        guard will != nil else {
            Issue.record("the broker never published the frozen scanner's will:\n\(broker.log)")
            return await finish()
        }
        let nodeOffline = await watch.waitForLine(timeout: .seconds(5)) { $0.contains("\"type\":\"node\"") && $0.contains("\"offline\"") }
        #expect(nodeOffline != nil, "the coordinator did not report the node offline")
        try await Task.sleep(for: .seconds(3))  // about 20 s frozen in all
        let mark = watch.lines.count
        scanner.send(SIGCONT)

        // Online again: a retained `online` after the will, a `node` event, and Ana back in Clothing in the presence.
        let online = await eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
            watch.lines.dropFirst(mark).contains { Mesh.topic(of: $0) == Self.statusTopic && $0.contains("\"online\"") }
        }
        #expect(online, "the scanner did not publish its online status again after resuming")
        let nodeOnline = await eventually(timeout: .seconds(10), interval: .milliseconds(100)) {
            watch.lines.dropFirst(mark).contains { $0.contains("\"type\":\"node\"") && $0.contains("\"online\"") }
        }
        #expect(nodeOnline, "the coordinator did not report the node online again")
        let counted = await eventually(timeout: .seconds(10), interval: .milliseconds(100)) {
            watch.lines.dropFirst(mark).contains(where: Self.showsAnaWithNodeOnline)
        }
        #expect(counted, "the coordinator did not count the resumed scanner's batches (Ana is not back in Clothing)")

        // The coordinator's health, from the reports after Ana was back (one a second): batches applied again, and no
        // more dropped as from an offline node.
        let back = watch.lines.count
        let reports = await eventually(timeout: .seconds(15), interval: .milliseconds(100)) { () -> [(batches: Int, offlineNode: Int)]? in
            let reports = watch.lines.dropFirst(back).filter { Mesh.topic(of: $0) == Self.healthTopic }.compactMap {
                Self.latestHealth([$0])
            }
            return reports.count >= 3 ? reports : nil
        }
        let before = reports?.first
        let after = reports?.last
        print("coordinator health after the resume: \(String(describing: before)) then \(String(describing: after))")
        if let before, let after {
            #expect(after.batches > before.batches, "no batches applied after the resume: \(before) → \(after)")
            #expect(after.offlineNode == before.offlineNode, "batches still dropped as from an offline node: \(before) → \(after)")
        } else {
            Issue.record("no coordinator health seen on \(Self.healthTopic)")
        }

        // A newcomer sees the retained status: online.
        let fresh = try await MosquittoClients.subscribe(port: broker.port, filter: Self.statusTopic, qos: 1)
        let retained = await fresh.waitForLine(timeout: .seconds(5)) { Mesh.topic(of: $0) == Self.statusTopic }
        #expect(retained?.contains("\"online\"") == true, "the retained status is \(retained ?? "missing")")
        await fresh.stop()

        #expect(scanner.isRunning, "the scanner stopped after resuming:\n\(scanner.transcript)")
        await finish()
        #expect(scanner.exitStatus == .exited(0), "\(scanner.transcript)")
    }
}
