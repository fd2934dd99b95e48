import BeaconMeshTesting
import Foundation
import Testing

/// Retention through the real coordinator: history older than `retention.visits` found in its SQLite file at a
/// restart is deleted (the contract: "checked at start and hourly"), the newer visits and the guest counts stay.
@Suite("History retention end to end")
struct RetentionEndToEndTests {
    @Test("history older than the retention is gone after a restart of the real coordinator; newer history and guest counts stay")
    func oldHistoryGoneAfterRestart() async throws {
        var run = try await CoordinatorRun.start(extraConfig: "retention: {visits: 2h}")
        let database = run.directory + "/mesh.sqlite"
        // A visit of Ana now: written by the coordinator when she leaves.
        try await run.send(department: 10, minor: 1, from: 1, count: 6)
        #expect(await run.waitForEvent("arrived") != nil, "\(run.coordinator.transcript)")
        #expect(await run.waitForEvent("left", timeout: .seconds(15)) != nil, "\(run.coordinator.transcript)")
        let finished = "SELECT COUNT(*) FROM visit_history WHERE left_at IS NOT NULL"
        // The writer saves it at once; a CI machine running every suite side by side may take seconds per fsync.
        let written =
            await eventually(timeout: .seconds(30), interval: .milliseconds(250)) {
                (try? await Mesh.sqlite(database, finished)) == "1" ? true : nil
            } ?? false
        #expect(written, "the visit was not written: \(run.coordinator.transcript)")
        _ = await run.coordinator.stop(with: SIGTERM, timeout: .seconds(10))

        // While it is stopped, the file gains a visit of three hours ago (with a stop) and that hour's guest count.
        let old = Mesh.nowMilliseconds - 3 * 3_600_000
        _ = try await Mesh.sqlite(
            database,
            """
            INSERT INTO visit_history (member, store, arrived_at, left_at, number) VALUES ('ana', 1, \(old), \(old + 60_000), 11);
            INSERT INTO visit_stop (member, store, arrived_at, position, finished, department, name, entered_at, dwell_ms)
                VALUES ('ana', 1, \(old), 0, 1, 10, 'Clothing', \(old), 60000);
            INSERT INTO guest_count (store, hour, department, visits, dwell_ms) VALUES (1, \(old - old % 3_600_000), 10, 5, 60000);
            """)
        #expect(try await Mesh.sqlite(database, "SELECT COUNT(*) FROM visit_history") == "2")

        run.coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", run.config])
        #expect(await run.coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        let gone =
            await eventually(timeout: .seconds(30), interval: .milliseconds(250)) {
                (try? await Mesh.sqlite(database, "SELECT COUNT(*) FROM visit_history WHERE arrived_at = \(old)")) == "0" ? true : nil
            } ?? false
        #expect(gone, "the visit of three hours ago is still kept: \(run.coordinator.transcript)")
        #expect(
            try await Mesh.sqlite(database, "SELECT COUNT(*) FROM visit_stop WHERE arrived_at = \(old)") == "0", "its stop went with it")
        #expect(try await Mesh.sqlite(database, finished) == "1", "today's visit stays")
        #expect(
            try await Mesh.sqlite(database, "SELECT SUM(visits) FROM guest_count WHERE hour = \(old - old % 3_600_000)") == "5",
            "guest counts stay")
        await run.stop()
    }
}
