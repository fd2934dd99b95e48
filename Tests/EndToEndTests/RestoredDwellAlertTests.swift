import BeaconMeshTesting
import Foundation
import Testing

/// A dwell alert times a member's stay in a department from her arrival there, also when the coordinator restarts
/// in the middle of it (her visit restored from the registry): it used to wait for her next move.
@Suite("dwell alerts across a restart, end to end", .serialized)
struct RestoredDwellAlertTests {
    @Test("Ana stays in Clothing; the coordinator is killed and started again 3 s in: her 8-s dwell alert still comes, at about 8 s")
    func dwellAlertAfterRestart() async throws {
        var run = try await CoordinatorRun.start(
            extraConfig: """
                alerts:
                  - {id: long-stay, store: 1, when: {dwell: {department: 10, over: 8s}}, cap: 1/visit}
                """)
        let alerts = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/1/alerts", qos: 1)
        // About 16 s of readings in Clothing, while the coordinator is replaced under them.
        let sending = Task { [run] in try await run.send(department: 10, minor: 1, from: 1, count: 64) }
        let arrived = try #require(await run.waitForEvent("arrived", timeout: .seconds(10)), "\(run.coordinator.transcript)")
        let arrivedAt = try #require(arrived["at"] as? Int64)
        try await Task.sleep(for: .seconds(3))
        _ = await run.coordinator.stop(with: SIGKILL, timeout: .seconds(5))
        run.coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", run.config])
        let restarted = await run.coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
        try #require(restarted != nil, "\(run.coordinator.transcript)")
        let line = await alerts.waitForLine(timeout: .seconds(12)) { $0.contains("long-stay") }
        let alert = try #require(line.flatMap(Mesh.payload(of:)), "no dwell alert after the restart:\n\(run.coordinator.transcript)")
        let late = (alert["at"] as? Int64 ?? 0) - arrivedAt
        #expect((7_000...10_500).contains(late), "the alert came \(late) ms after her arrival, not about 8 s")
        #expect((alert["member"] as? [String: Any])?["id"] as? String == "ana" && alert["kind"] as? String == "dwell")
        #expect(run.events(ofType: "arrived").count == 1, "greeted once: \(run.events.lines)")
        sending.cancel()
        await alerts.stop()
        await run.stop()
    }
}
