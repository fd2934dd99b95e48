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
        // Ana's node goes on (its clock still 3 h behind) while the checks below wait: on a loaded machine they can take
        // longer than exitAfter, and a silence that long would end her visit before her node's clock jumps.
        let keepHearing = Task {
            try await run.send(department: 10, minor: 1, from: 17, count: 80, clockAhead: -3 * CoordinatorFaultTests.hour)
        }
        let greeted = await eventually(timeout: .seconds(5)) { run.events(ofType: "arrived").count >= 2 }
        let arrivals = run.events(ofType: "arrived").map { "\(($0["member"] as? [String: Any])?["id"] ?? "?") \($0["department"] ?? "?")" }
        #expect(greeted && Set(arrivals) == ["ana 10", "zoe 20"], "\(arrivals)\n\(run.coordinator.transcript)")

        let skews = await eventually(timeout: .seconds(5)) { () -> [Int: Int64]? in
            guard let nodes = CoordinatorFaultTests.healthReports(health).last?["nodes"] as? [[String: Any]], nodes.count == 2 else {
                return nil
            }
            return Dictionary(
                uniqueKeysWithValues: nodes.compactMap { node in
                    (node["department"] as? Int).flatMap { department in (node["clockSkewMs"] as? Int).map { (department, Int64($0)) } }
                })
        }
        #expect(skews.map { abs($0[10, default: 0] + 3 * CoordinatorFaultTests.hour) < 5_000 } == true, "\(String(describing: skews))")
        #expect(skews.map { abs($0[20, default: 0] - CoordinatorFaultTests.hour) < 5_000 } == true, "\(String(describing: skews))")

        // Clothing's node gets network time mid-visit: its clock jumps 3 h forward. Ana stays, nobody leaves.
        keepHearing.cancel()
        _ = await keepHearing.result
        try await run.send(department: 10, minor: 1, from: 100, count: 12)
        #expect(!run.events(ofType: "left").contains { ($0["member"] as? [String: Any])?["id"] as? String == "ana" }, "\(run.events.lines)")
        let left = await eventually(timeout: .seconds(8)) { run.events(ofType: "left").count >= 2 }
        #expect(left, "both leave exitAfter after their last reading: \(run.events.lines)")
        #expect(run.events(ofType: "arrived").count == 2 && run.events(ofType: "moved").isEmpty, "\(run.events.lines)")
        await health.stop()
        await run.stop()
    }

    @Test("batches reordered on the way (1, 2, 5, 3, 4, then 2 again): health counts them late, not as gaps; a seq never sent stays a gap")
    func reorderedBatchesAreNotGaps() async throws {
        let run = try await CoordinatorRun.start(arguments: ["--health-interval", "500ms"])
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/health")
        // MQTT keeps order only within one connection: after a broker restart a batch can overtake an older one.
        for seq in [1, 2, 5, 3, 4, 2, 8] {
            try await run.send(department: 10, minor: 1, from: seq, count: 1, every: .milliseconds(50))
        }
        let report = await eventually(timeout: .seconds(5)) { () -> [String: Any]? in
            guard let report = CoordinatorFaultTests.healthReports(health).last, report["batches"] as? Int == 4 else { return nil }
            return report
        }
        let dropped = report?["dropped"] as? [String: Any]
        #expect(report?["gaps"] as? Int == 2, "6 and 7 were never sent: \(String(describing: report))\n\(run.coordinator.transcript)")
        #expect(dropped?["late"] as? Int == 3, "3, 4 and the second 2: \(String(describing: report))")
        await health.stop()
        await run.stop()
    }

    /// Holds the database locked from another process (`BEGIN EXCLUSIVE`) for `seconds`; returns once it is held.
    private static func lockDatabase(_ path: String, seconds: Int) async throws -> TestProcess {
        let locker = try TestProcess(
            executable: "/usr/bin/env",
            arguments: [
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
        guard await list.waitForExit() == .exited(0), let row = list.stdoutLines.first(where: { $0.hasPrefix(member + " ") }) else {
            return nil
        }
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
        // Events leave in order and a visit's last is its leaving: a second greeting or leaving would be here by now.
        #expect(run.events(ofType: "arrived").count == 1 && run.events(ofType: "left").count == 1, "every event once: \(run.events.lines)")
        // A promo's offer waits for its firing to be written (issue 37): none while the database refuses writes.
        #expect(run.events(ofType: "promo").isEmpty, "\(run.events.lines)")

        // The writer's failure (a locked file's busy wait takes a while) shows in health and in the log. A locked
        // file's busy wait (5 s) is as long as the poll's read may wait before health says the database has not
        // answered, so a report between the two may say that first: true then, and followed by the cause.
        let failing = await eventually(timeout: .seconds(15), interval: .milliseconds(100)) {
            CoordinatorFaultTests.healthReports(health).compactMap { $0["database"] as? [String: Any] }
                .first { $0["state"] as? String == "failing" && ($0["error"] as? String)?.contains(expected) == true }
        }
        #expect(failing != nil, "\(CoordinatorFaultTests.healthReports(health).compactMap { $0["database"] })")
        let errors = CoordinatorFaultTests.healthReports(health).compactMap { ($0["database"] as? [String: Any])?["error"] as? String }
        #expect(errors.allSatisfy { $0.contains(database) && ($0.contains(expected) || $0.contains("has not answered")) }, "\(errors)")
        _ = await eventually(timeout: .seconds(5)) {
            run.coordinator.stderrLines.contains { $0.contains("cannot write to the registry database") }
        }
        let reports = run.coordinator.stderrLines.filter { $0.contains("cannot write to the registry database") }
        #expect(reports.count == 1, "reported once: \(reports)")
        #expect(reports.first.map { $0.contains(database) && $0.contains(expected) } == true, "\(reports)")
        #expect(!run.coordinator.stderrLines.contains { $0.contains("slow tick") }, "\(run.coordinator.transcript)")

        try await clear(run)
        let saved = await eventually(timeout: .seconds(15), interval: .milliseconds(500)) { () -> Bool in
            run.coordinator.stderrLines.contains { $0.contains("registry database writable again") }
        }
        #expect(saved, "\(run.coordinator.transcript)")
        // Written, the promo goes out, once.
        #expect(await eventually(timeout: .seconds(5)) { run.events(ofType: "promo").count == 1 }, "\(run.events.lines)")
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
        try await CoordinatorFaultTests.visitWhileDatabaseFails(
            cause: "locked",
            fault: { run in
                locker = try await CoordinatorFaultTests.lockDatabase(run.directory + "/mesh.sqlite", seconds: 60)
            },
            clear: { _ in
                _ = await locker?.stop(with: SIGTERM)
            })
    }

    @Test("a database file made unwritable under the coordinator (chattr +i): presence goes on, written when it is writable again")
    func unwritableDatabase() async throws {
        func attribute(_ flag: String, _ directory: String) async throws {
            let chattr = try TestProcess(
                executable: "/usr/bin/env",
                arguments: [
                    "chattr", flag, directory + "/mesh.sqlite", directory + "/mesh.sqlite-wal",
                ])
            try #require(await chattr.waitForExit() == .exited(0), "\(chattr.transcript)")
        }
        try await CoordinatorFaultTests.visitWhileDatabaseFails(
            cause: "cannot be written",
            fault: { run in
                try await attribute("+i", run.directory)
            },
            clear: { run in
                try await attribute("-i", run.directory)
            })
    }

    @Test("a full disk under the database (a 2 MB file system, filled up): presence goes on, written when space is freed")
    func fullDisk() async throws {
        let directory = try Mesh.temporaryDirectory()
        let mount = try TestProcess(executable: "/usr/bin/env", arguments: ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", directory])
        try #require(
            await mount.waitForExit() == .exited(0), "this test makes a small file system with mount (as root): \(mount.transcript)")
        let filler = directory + "/filler"
        // Unmounted (and waited for) whether the test passes or throws: a `defer` could only start umount, and a
        // test process that ended first left the small file system mounted under /tmp.
        var failure: (any Error)?
        do {
            try await Self.fillAndFree(directory: directory, filler: filler)
        } catch {
            failure = error
        }
        let umount = try TestProcess(executable: "/usr/bin/env", arguments: ["umount", "-l", directory])
        #expect(await umount.waitForExit(timeout: .seconds(10)) == .exited(0), "\(umount.transcript)")
        try? FileManager.default.removeItem(atPath: directory)
        if let failure { throw failure }
    }

    /// The full-disk test's body: a visit while `filler` fills `directory`, written once it is removed.
    private static func fillAndFree(directory: String, filler: String) async throws {
        try await CoordinatorFaultTests.visitWhileDatabaseFails(
            cause: "full", directory: directory,
            fault: { _ in
                _ = FileManager.default.createFile(atPath: filler, contents: nil)
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
                let chunk = Data(count: 16 * 1024)
                while (try? handle.write(contentsOf: chunk)) != nil {}
                try? handle.close()
            },
            clear: { _ in
                try FileManager.default.removeItem(atPath: filler)
            })
    }
}

/// Hostile input at volume and consumers that do not keep up.
@Suite("beacon-coordinator under hostile input", .serialized)
struct CoordinatorHostileInputTests {
    /// 100,000 lines of garbage for the sightings and status topics, each line one message: random bytes, cut-off
    /// and wrongly typed batches, unknown versions, bodies that disagree with their topic, JSON nested too deep.
    private static func garbage(count: Int, seed: UInt64) -> [String] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let batch = Mesh.batch(store: 1, department: 10, seq: 1, minor: 1, at: Mesh.nowMilliseconds)
        return (0..<count).map { index in
            switch index % 7 {
            case 0: return String((0..<(8 + Int(next() % 120))).map { _ in Character(UnicodeScalar(UInt8(33 + next() % 94))) })
            case 1: return String(batch.prefix(1 + Int(next() % UInt64(batch.count - 1))))
            case 2: return #"{"v":1,"store":"one","department":10,"node":"a","boot":"x","seq":-1,"sentAt":"now","sightings":{}}"#
            case 3: return #"{"v":\#(2 + next() % 1000),"state":"online"}"#
            case 4: return Mesh.batch(store: 1, department: 20, node: "b", seq: Int(next() % 1000) + 1, minor: 1, at: 0)
            case 5: return String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
            default:
                return
                    #"{"v":1,"store":1,"department":10,"node":"a","boot":"x","seq":1,"sentAt":1,"sightings":[{"beacon":"ibeacon:nope","rssi":"loud"}]}"#
            }
        }
    }

    @Test("100,000 random, malformed and oversized messages: the coordinator stays up, bounded, counts each by reason, and still greets")
    func hostileInputAtVolume() async throws {
        let run = try await CoordinatorRun.start(arguments: ["--health-interval", "1s"], brokerConfiguration: ["max_queued_messages 0"])
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/health")
        let sightings = "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings"
        let status = "beaconmesh/v1/stores/1/departments/10/nodes/a/status"
        // One `mosquitto_pub -l` per topic, each reading files of 20,000 lines one after the other (a single
        // `mosquitto_pub -l` stops reading long inputs early).
        let files = [(sightings, 80_000, UInt64(1)), (status, 20_000, UInt64(2))].map { topic, count, seed in
            let lines = CoordinatorHostileInputTests.garbage(count: count, seed: seed)
            let paths = stride(from: 0, to: count, by: 20_000).map { start in
                let path = run.directory + "/garbage-\(seed)-\(start).txt"
                _ = FileManager.default.createFile(
                    atPath: path,
                    contents: Data(
                        lines[start..<min(count, start + 20_000)]
                            .joined(separator: "\n").utf8 + [0x0A]))
                return path
            }
            return (topic, paths)
        }
        let publishers = try files.map { topic, paths in
            try TestProcess(
                executable: "/bin/sh",
                arguments: [
                    "-c",
                    "set -e; pub=$0; port=$1; topic=$2; shift 3; for file in \"$@\"; do \"$pub\" -h 127.0.0.1 -p \"$port\" -q 1 -t \"$topic\" -l < \"$file\"; done",
                    try MosquittoClients.executable("mosquitto_pub"), "\(run.broker.port)", topic, "--",
                ] + paths)
        }
        for _ in 0..<20 {
            try await MosquittoClients.publish(
                port: run.broker.port, topic: sightings,
                payload: [UInt8](repeating: 0x5B, count: 300 * 1024), qos: 1)
        }
        for publisher in publishers {
            #expect(await publisher.waitForExit(timeout: .seconds(120)) == .exited(0), "\(publisher.transcript)")
        }
        // Everything counted, by reason (the status topic's garbage included).
        let counted = await eventually(timeout: .seconds(60), interval: .milliseconds(200)) { () -> [String: Int]? in
            guard let dropped = Mesh.payload(of: health.lines.last ?? "")?["dropped"] as? [String: Int],
                dropped.values.reduce(0, +) == 100_020
            else { return nil }
            return dropped
        }
        #expect(
            counted != nil,
            "\(health.lines.last ?? "no health")\n\(run.coordinator.stderrLines.suffix(30).joined(separator: "\n"))\n\(run.broker.log.suffix(3000))"
        )
        for reason in ["invalid-json", "wrong-type", "unknown-version", "topic-mismatch", "too-large"] {
            #expect((counted?[reason] ?? 0) > 0, "\(reason): \(String(describing: counted))")
        }
        #expect(run.coordinator.isRunning, "\(run.coordinator.transcript)")

        // Legitimate traffic still goes through, at once.
        try await run.send(department: 10, minor: 1, boot: "real", from: 1, count: 8)
        #expect(await run.waitForEvent("arrived", timeout: .seconds(5)) != nil, "\(run.coordinator.transcript)")
        let peak = try String(contentsOfFile: "/proc/\(run.coordinator.processID)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
        #expect(peak.map { $0 < 150 * 1024 } == true, "peak RSS \(String(describing: peak)) kB")
        let logged = run.coordinator.stderrLines.filter { $0.contains("dropped a message") }
        #expect(logged.count <= 10, "each reason logged once, not per message: \(logged.count) lines")
        await health.stop()
        await run.stop()
    }
}

@Suite("broker restarts under traffic", .serialized)
struct BrokerRestartTests {
    @Test("a broker restart under steady traffic from three scanners: every seq reaches the coordinator, no event twice")
    func brokerRestartUnderTraffic() async throws {
        let run = try await CoordinatorRun.start(arguments: ["--health-interval", "1s"], persistentBroker: true)
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/health")
        let scanners = try [10, 20, 30].map { department in
            try Mesh.program(
                "beacon-scanner",
                [
                    "--store", "1", "--department", "\(department)", "--broker", run.broker.url, "--source", "sim",
                    "--sim-route", "10,20,30", "--sim-outside", "0s", "--flush", "250ms",
                ])
        }
        #expect(await run.waitForEvent("arrived", timeout: .seconds(15)) != nil, "\(scanners[0].transcript)")
        try await Task.sleep(for: .seconds(2))
        try await run.broker.restart()
        try await Task.sleep(for: .seconds(8))
        // The events subscription is not persistent: it saw what was published before and after the restart.
        for scanner in scanners {
            #expect(await scanner.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0), "\(scanner.transcript)")
        }
        let report = await eventually(timeout: .seconds(5)) { () -> [String: Any]? in
            guard let report = Mesh.payload(of: health.lines.last ?? ""), (report["batches"] as? Int ?? 0) > 0 else { return nil }
            return report
        }
        #expect(
            report?["gaps"] as? Int == 0,
            "no seq missing: \(String(describing: report))\n\(scanners.map { $0.stderrLines.suffix(6).joined(separator: "\n") }.joined(separator: "\n---\n"))\n\(run.coordinator.stderrLines.suffix(12).joined(separator: "\n"))"
        )
        let events = run.events.lines.compactMap(Mesh.payload(of:))
        let ids = events.compactMap { $0["id"] as? String }
        #expect(Set(ids).count == ids.count, "an event published twice: \(run.events.lines)")
        let arrivals = events.filter { $0["type"] as? String == "arrived" }.compactMap {
            ($0["member"] as? [String: Any])?["id"] as? String
        }
        #expect(Set(arrivals).count == arrivals.count, "a member greeted twice in one visit: \(arrivals)")
        await health.stop()
        await run.stop()
    }
}

@Suite("consumers that do not keep up", .serialized)
struct StuckConsumerTests {
    /// A monitor that subscribes to everything at QoS 1 and then never reads its socket again.
    private static let stuckSubscriber = """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        cid = b"stuck-monitor"
        body = b"\\x00\\x04MQTT\\x04\\x02\\x00\\x3c" + len(cid).to_bytes(2, "big") + cid
        s.sendall(bytes([0x10, len(body)]) + body)
        s.recv(4)
        topic = b"beaconmesh/v1/#"
        body = b"\\x00\\x01" + len(topic).to_bytes(2, "big") + topic + b"\\x01"
        s.sendall(bytes([0x82, len(body)]) + body)
        s.recv(5)
        print("subscribed", flush=True)
        time.sleep(300)
        """

    @Test("a monitor that never reads (and one frozen with SIGSTOP) does not slow the coordinator")
    func stuckMonitor() async throws {
        let run = try await CoordinatorRun.start(arguments: ["--health-interval", "1s"])
        let stuck = try TestProcess(
            executable: "/usr/bin/env",
            arguments: [
                "python3", "-c", StuckConsumerTests.stuckSubscriber, "\(run.broker.port)",
            ])
        #expect(await stuck.waitForLine(in: .stdout, timeout: .seconds(10)) { $0 == "subscribed" } != nil, "\(stuck.transcript)")
        let frozen = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/#", qos: 1)
        frozen.process.send(SIGSTOP)
        // 15,000 batches of guests from a node at the door: a few MB the stuck consumers will never read.
        let lines = (1...15_000).map { seq in
            Mesh.batch(store: 1, department: 40, boot: "load", seq: seq, minor: 100 + seq % 20, at: Mesh.nowMilliseconds)
        }
        let file = run.directory + "/load.txt"
        _ = FileManager.default.createFile(atPath: file, contents: Data((lines.joined(separator: "\n") + "\n").utf8))
        let load = try TestProcess(
            executable: "/bin/sh",
            arguments: [
                "-c", "exec \"$0\" -h 127.0.0.1 -p \"$1\" -q 1 -t beaconmesh/v1/stores/1/departments/40/nodes/a/sightings -l < \"$2\"",
                try MosquittoClients.executable("mosquitto_pub"), "\(run.broker.port)", file,
            ])
        #expect(await load.waitForExit(timeout: .seconds(60)) == .exited(0), "\(load.transcript)")

        let started = ContinuousClock.now
        try await run.send(department: 10, minor: 1, from: 1, count: 8)
        let arrived = await run.waitForEvent("arrived", timeout: .seconds(5))
        #expect(arrived != nil, "\(run.coordinator.transcript)")
        #expect(ContinuousClock.now - started < .seconds(4), "greeted \(ContinuousClock.now - started) after the first sighting")
        #expect(!run.coordinator.stderrLines.contains { $0.contains("slow tick") }, "\(run.coordinator.transcript)")
        frozen.process.send(SIGCONT)
        await frozen.stop()
        await stuck.stop(with: SIGKILL)
        await run.stop()
    }
}
