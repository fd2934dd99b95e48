import BeaconMeshTesting
import Foundation
import Testing

/// What real stores do to the coordinator, through the real programs and a real broker: node clocks that are off,
/// and a registry database that is locked, made unwritable or full.
@Suite("beacon-coordinator faults", .serialized)
struct CoordinatorFaultTests {
    private static let hour: Int64 = 3_600_000

    /// The coordinator's health reports on `coordinators/e2e/health`, as JSON objects.
    private static func healthReports(_ subscription: Subscription) -> [[String: Any]] {
        subscription.lines.compactMap(Mesh.payload(of:))
    }

    @Test("nodes whose clocks are 3 h behind and 1 h ahead still greet; a clock that jumps ends no visit; health shows each skew")
    func untrustedNodeClocks() async throws {
        let run = try await CoordinatorRun.start(arguments: ["--health-interval", "500ms"])
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/health")
        // Ana in Clothing, whose node booted without network time; Zoë in Housewares, whose node runs an hour ahead.
        async let clothing: Void = run.send(department: 10, minor: 1, from: 1, count: 16, clockAhead: -3 * CoordinatorFaultTests.hour)
        async let housewares: Void = run.send(department: 20, minor: 4, from: 1, count: 16, clockAhead: CoordinatorFaultTests.hour)
        _ = try await (clothing, housewares)
        let greeted = await eventually(timeout: .seconds(5)) { run.events(ofType: "arrived").count >= 2 }
        let arrivals = run.events(ofType: "arrived").map { "\(($0["member"] as? [String: Any])?["id"] ?? "?") \($0["department"] ?? "?")" }
        #expect(greeted && Set(arrivals) == ["ana 10", "zoe 20"], "\(arrivals)\n\(run.coordinator.transcript)")

        let skews = await eventually(timeout: .seconds(5)) { () -> [Int: Int64]? in
            guard let nodes = CoordinatorFaultTests.healthReports(health).last?["nodes"] as? [[String: Any]], nodes.count == 2 else { return nil }
            return Dictionary(uniqueKeysWithValues: nodes.compactMap { node in
                (node["department"] as? Int).flatMap { department in (node["clockSkewMs"] as? Int).map { (department, Int64($0)) } }
            })
        }
        #expect(skews.map { abs($0[10, default: 0] + 3 * CoordinatorFaultTests.hour) < 5_000 } == true, "\(String(describing: skews))")
        #expect(skews.map { abs($0[20, default: 0] - CoordinatorFaultTests.hour) < 5_000 } == true, "\(String(describing: skews))")

        // Clothing's node gets network time mid-visit: its clock jumps 3 h forward. Ana stays, nobody leaves.
        try await run.send(department: 10, minor: 1, from: 17, count: 12)
        #expect(!run.events(ofType: "left").contains { ($0["member"] as? [String: Any])?["id"] as? String == "ana" }, "\(run.events.lines)")
        let left = await eventually(timeout: .seconds(8)) { run.events(ofType: "left").count >= 2 }
        #expect(left, "both leave exitAfter after their last reading: \(run.events.lines)")
        #expect(run.events(ofType: "arrived").count == 2 && run.events(ofType: "moved").isEmpty, "\(run.events.lines)")
        await health.stop()
        await run.stop()
    }

    /// Holds the database locked from another process (`BEGIN EXCLUSIVE`) for `seconds`; returns once it is held.
    private static func lockDatabase(_ path: String, seconds: Int) async throws -> TestProcess {
        let locker = try TestProcess(executable: "/usr/bin/env", arguments: [
            "python3", "-c",
            "import sqlite3, sys, time\n"
                + "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)\n"
                + "c.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(float(sys.argv[2]))\n",
            path, String(seconds),
        ])
        let locked = await locker.waitForLine(in: .stdout, timeout: .seconds(10)) { $0 == "locked" }
        try #require(locked != nil, "\(locker.transcript)")
        return locker
    }

    /// Ana's visit count as `members list` shows it (nil if the command fails).
    private static func visits(of member: String, database: String) async throws -> Int? {
        let list = try Mesh.program("beacon-coordinator", ["members", "list", "--db", database])
        guard await list.waitForExit() == .exited(0), let row = list.stdoutLines.first(where: { $0.hasPrefix(member + " ") }) else { return nil }
        return row.split(separator: " ").compactMap { Int($0) }.first
    }

    /// Drives one visit of Ana while the database refuses writes (`fault` makes it so, `clear` undoes it), and
    /// checks the contract: presence goes on from memory, every event once, the problem reported once with the file
    /// and its cause, health says so, and the visit count reaches the database when it clears.
    private static func visitWhileDatabaseFails(
        cause expected: String, directory: String? = nil, fault: (CoordinatorRun) async throws -> Void,
        clear: (CoordinatorRun) async throws -> Void
    ) async throws {
        let run = try await CoordinatorRun.start(arguments: ["--health-interval", "500ms"], directory: directory)
        let database = run.directory + "/mesh.sqlite"
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/health")
        try await fault(run)

        let started = ContinuousClock.now
        async let sending: Void = run.send(department: 10, minor: 1, from: 1, count: 12)
        let arrived = await run.waitForEvent("arrived", timeout: .seconds(6))
        let greetedAfter = ContinuousClock.now - started
        try await sending
        #expect(arrived != nil, "\(run.coordinator.transcript)")
        #expect(greetedAfter < .seconds(3), "greeted \(greetedAfter) after the first sighting: the database held it up")
        #expect((arrived?["visit"] as? [String: Any])?["number"] as? Int == 12)
        #expect(await run.waitForEvent("left", timeout: .seconds(8)) != nil)
        try await Task.sleep(for: .seconds(1))
        #expect(run.events(ofType: "arrived").count == 1 && run.events(ofType: "left").count == 1, "every event once: \(run.events.lines)")
        #expect(run.events(ofType: "promo").count == 1, "\(run.events.lines)")

        let failing = CoordinatorFaultTests.healthReports(health).compactMap { $0["database"] as? [String: Any] }
            .first { $0["state"] as? String == "failing" }
        #expect((failing?["error"] as? String)?.contains(expected) == true, "\(String(describing: failing))")
        let reports = run.coordinator.stderrLines.filter { $0.contains("cannot write to the registry database") }
        #expect(reports.count == 1, "reported once: \(reports)")
        #expect(reports.first.map { $0.contains(database) && $0.contains(expected) } == true, "\(reports)")
        #expect(!run.coordinator.stderrLines.contains { $0.contains("slow tick") }, "\(run.coordinator.transcript)")

        try await clear(run)
        let saved = await eventually(timeout: .seconds(15), interval: .milliseconds(500)) { () -> Bool in
            run.coordinator.stderrLines.contains { $0.contains("registry database writable again") }
        }
        #expect(saved, "\(run.coordinator.transcript)")
        let ok = await eventually(timeout: .seconds(5)) {
            (CoordinatorFaultTests.healthReports(health).last?["database"] as? [String: Any])?["state"] as? String == "ok"
        }
        #expect(ok)
        await health.stop()
        await run.stop()
        #expect(try await CoordinatorFaultTests.visits(of: "ana", database: database) == 12, "the visit was counted once it cleared")
    }

    @Test("a database locked by another program: presence goes on, reported once, the visit count written when it is free")
    func lockedDatabase() async throws {
        var locker: TestProcess?
        try await CoordinatorFaultTests.visitWhileDatabaseFails(cause: "locked", fault: { run in
            locker = try await CoordinatorFaultTests.lockDatabase(run.directory + "/mesh.sqlite", seconds: 60)
        }, clear: { _ in
            _ = await locker?.stop(with: SIGTERM)
        })
    }

    @Test("a database file made unwritable under the coordinator (chattr +i): presence goes on, written when it is writable again")
    func unwritableDatabase() async throws {
        func attribute(_ flag: String, _ directory: String) async throws {
            let chattr = try TestProcess(executable: "/usr/bin/env", arguments: [
                "chattr", flag, directory + "/mesh.sqlite", directory + "/mesh.sqlite-wal",
            ])
            try #require(await chattr.waitForExit() == .exited(0), "\(chattr.transcript)")
        }
        try await CoordinatorFaultTests.visitWhileDatabaseFails(cause: "cannot be written", fault: { run in
            try await attribute("+i", run.directory)
        }, clear: { run in
            try await attribute("-i", run.directory)
        })
    }

    @Test("a full disk under the database (a 2 MB file system, filled up): presence goes on, written when space is freed")
    func fullDisk() async throws {
        let directory = try Mesh.temporaryDirectory()
        let mount = try TestProcess(executable: "/usr/bin/env", arguments: ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", directory])
        try #require(await mount.waitForExit() == .exited(0), "this test makes a small file system with mount (as root): \(mount.transcript)")
        let filler = directory + "/filler"
        defer { _ = try? TestProcess(executable: "/usr/bin/env", arguments: ["umount", "-l", directory]) }
        try await CoordinatorFaultTests.visitWhileDatabaseFails(cause: "full", directory: directory, fault: { _ in
            FileManager.default.createFile(atPath: filler, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
            let chunk = Data(count: 16 * 1024)
            while (try? handle.write(contentsOf: chunk)) != nil {}
            try? handle.close()
        }, clear: { _ in
            try FileManager.default.removeItem(atPath: filler)
        })
    }
}
