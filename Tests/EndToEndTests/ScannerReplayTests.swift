import BeaconMeshTesting
import Foundation
import Testing

@Suite("beacon-scanner end to end", .serialized)
struct ScannerEndToEndTests {
    @Test("replaying each shared capture at --speed max publishes exactly its golden iBeacons, then offline, exit 0")
    func replayCaptures() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let captures = try Mesh.captures()
        #expect(!captures.isEmpty)
        for (index, capture) in captures.enumerated() {
            let department = 100 + index
            let subscription = try await MosquittoClients.subscribe(
                port: broker.port, filter: "beaconmesh/v1/stores/7/departments/\(department)/#", qos: 1)
            let scanner = try Mesh.program(
                "beacon-scanner",
                [
                    "--store", "7", "--department", "\(department)", "--broker", broker.url,
                    "--source", "btsnoop:\(capture.path)", "--speed", "max",
                ])
            let status = await scanner.waitForExit(timeout: .seconds(30))
            #expect(status == .exited(0), "\(capture.path): \(scanner.transcript)")
            _ = await subscription.waitForLine(timeout: .seconds(5)) { $0.contains("/status") && $0.contains("\"offline\"") }
            await subscription.stop()
            var published: Set<String> = []
            for line in subscription.lines where Mesh.topic(of: line).hasSuffix("/sightings") {
                let sightings = Mesh.payload(of: line)?["sightings"] as? [[String: Any]] ?? []
                for sighting in sightings { if let beacon = sighting["beacon"] as? String { published.insert(beacon) } }
            }
            #expect(published == (try Mesh.goldenIBeacons(of: capture)), "\(capture.path)")
            let statuses = subscription.lines.filter { Mesh.topic(of: $0).hasSuffix("/status") }
            #expect(statuses.first?.contains("\"online\"") == true)
            #expect(statuses.last?.contains("\"offline\"") == true)
        }
    }

    @Test("batches number themselves 1, 2, 3… within one boot and carry the contract's fields")
    func batchSequence() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let capture = try #require(try Mesh.captures().first)
        let subscription = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/7/+/+/nodes/+/sightings", qos: 1)
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "7", "--department", "1", "--node", "n-1", "--broker", broker.url,
                "--source", "btsnoop:\(capture.path)", "--speed", "max", "--flush", "1s",
            ])
        #expect(await scanner.waitForExit(timeout: .seconds(30)) == .exited(0))
        #expect(await Self.received(everyBatchOf: scanner, in: subscription), "\(scanner.transcript)")
        await subscription.stop()
        let batches = subscription.lines.compactMap(Mesh.payload(of:))
        #expect(!batches.isEmpty)
        #expect(batches.compactMap { $0["seq"] as? Int } == Array(1...batches.count))
        #expect(Set(batches.compactMap { $0["boot"] as? String }).count == 1)
        let first = try #require(batches.first)
        #expect(
            first["v"] as? Int == 1 && first["store"] as? Int == 7 && first["department"] as? Int == 1 && first["node"] as? String == "n-1")
        let sighting = try #require((first["sightings"] as? [[String: Any]])?.first)
        for field in ["beacon", "rssi", "count", "txPower", "distance", "proximity", "lastSeen"] {
            #expect(sighting.keys.contains(field), "missing \(field)")
        }
    }

    @Test("a scanner killed with SIGKILL leaves its retained status offline (last will)")
    func lastWill() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "3", "--department", "4", "--broker", broker.url, "--source", "sim",
            ])
        let online = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/3/departments/4/nodes/a/status")
        #expect(await online.waitForLine(timeout: .seconds(10)) { $0.contains("\"online\"") } != nil, "\(scanner.transcript)")
        await online.stop()
        scanner.send(SIGKILL)
        _ = await scanner.waitForExit()
        // Retained "online" first if the broker has not yet noticed; its will, "offline", follows.
        let retained = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/3/departments/4/nodes/a/status")
        #expect(await retained.waitForLine(timeout: .seconds(10)) { $0.contains("\"state\":\"offline\"") } != nil)
        await retained.stop()
    }

    @Test("SIGTERM stops a scanner cleanly: offline status, exit 0")
    func cleanShutdown() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let subscription = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/3/departments/5/nodes/a/status", qos: 1)
        let scanner = try Mesh.program("beacon-scanner", ["--store", "3", "--department", "5", "--broker", broker.url, "--source", "sim"])
        #expect(await subscription.waitForLine(timeout: .seconds(10)) { $0.contains("\"online\"") } != nil)
        #expect(await scanner.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0))
        #expect(await subscription.waitForLine(timeout: .seconds(5)) { $0.contains("\"offline\"") } != nil)
        await subscription.stop()
    }

    @Test(
        "bad flags exit 2 with one line naming what is wrong",
        arguments: [
            (["--store", "1"], "department"),
            (["--store", "1", "--department", "2", "--source", "usb0"], "--source"),
            (["--store", "1", "--department", "2", "--node", "Bad Node"], "--node"),
            (["--store", "1", "--department", "2", "--speed", "fast"], "--speed"),
            (["--store", "1", "--department", "2", "--qos", "2"], "--qos"),
            (["--store", "99999", "--department", "2"], "store"),
            (["--store", "1", "--department", "2", "--broker", "http://x:1"], "http://x:1"),
            (["--store", "1", "--department", "2", "--uuid", "nope"], "--uuid"),
        ])
    func badFlags(arguments: [String], mentions: String) async throws {
        let scanner = try Mesh.program("beacon-scanner", arguments)
        #expect(await scanner.waitForExit(timeout: .seconds(10)) == .exited(2))
        let errors = scanner.stderrLines.filter { !$0.isEmpty }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.contains(mentions) == true, "\(errors)")
    }

    @Test("a capture that is not a btsnoop file is one clear line, not a crash")
    func notACapture() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let directory = try Mesh.temporaryDirectory()
        try "hello".write(toFile: directory + "/bogus.log", atomically: true, encoding: .utf8)
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "2", "--broker", broker.url, "--source", "btsnoop:\(directory)/bogus.log", "--speed", "max",
            ])
        let status = await scanner.waitForExit(timeout: .seconds(20))
        #expect(status == .exited(2), "\(scanner.transcript)")
        #expect(scanner.stderrLines.last?.contains("bogus.log") == true, "\(scanner.transcript)")
    }

    @Test("hci0 on a machine without Bluetooth is one line saying what to check, exit 2")
    func noAdapter() async throws {
        let scanner = try Mesh.program(
            "beacon-scanner", ["--store", "1", "--department", "2", "--source", "hci0", "--broker", "mqtt://127.0.0.1:1"])
        #expect(await scanner.waitForExit(timeout: .seconds(10)) == .exited(2))
        let last = scanner.stderrLines.last ?? ""
        #expect(last.hasPrefix("beacon-scanner: ") && last.contains("hci0"), "\(scanner.transcript)")
    }

    @Test("what --record writes replays to the same sightings")
    func recordReplaysTheSame() async throws {
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let directory = try Mesh.temporaryDirectory()
        var published: [Set<String>] = []
        for (index, source) in [try #require(try Mesh.captures().last).path, directory + "/recorded.log"].enumerated() {
            let subscription = try await MosquittoClients.subscribe(
                port: broker.port, filter: "beaconmesh/v1/stores/8/departments/\(index)/nodes/a/sightings", qos: 1)
            var arguments = [
                "--store", "8", "--department", "\(index)", "--broker", broker.url, "--source", "btsnoop:\(source)", "--speed", "max",
            ]
            if index == 0 { arguments += ["--record", directory + "/recorded.log"] }
            let scanner = try Mesh.program("beacon-scanner", arguments)
            #expect(await scanner.waitForExit(timeout: .seconds(30)) == .exited(0), "\(scanner.transcript)")
            #expect(await Self.received(everyBatchOf: scanner, in: subscription), "\(scanner.transcript)")
            await subscription.stop()
            var beacons: Set<String> = []
            for line in subscription.lines {
                for sighting in Mesh.payload(of: line)?["sightings"] as? [[String: Any]] ?? [] {
                    if let beacon = sighting["beacon"] as? String, let count = sighting["count"] as? Int {
                        beacons.insert("\(beacon)×\(count)")
                    }
                }
            }
            published.append(beacons)
        }
        #expect(!published[0].isEmpty)
        #expect(published[0] == published[1])
    }

    @Test("a broker restart during a replay at --speed 1 loses no batch")
    func brokerRestartLosesNothing() async throws {
        let directory = try Mesh.temporaryDirectory()
        let recorder = try await MosquittoBroker.start()
        // A few seconds of simulated shoppers, recorded, make the capture to replay at recorded pace.
        let simulated = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "4", "--department", "10", "--broker", recorder.url, "--source", "sim", "--sim-route", "10", "--sim-outside",
                "0s",
                "--record", directory + "/shoppers.log",
            ])
        try await Task.sleep(for: .seconds(7))
        #expect(await simulated.stop(with: SIGTERM) == .exited(0))
        await recorder.stop()

        let broker = try await MosquittoBroker.start(persistence: true)
        defer { Task { await broker.stop() } }
        let subscription = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/4/departments/10/nodes/a/sightings", qos: 1,
            extraArguments: ["-c", "-i", "restart-watcher"])
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "4", "--department", "10", "--broker", broker.url, "--source", "btsnoop:\(directory)/shoppers.log",
                "--speed", "1", "--flush", "250ms",
            ])
        try await Task.sleep(for: .seconds(2))
        await broker.stop()
        try await Task.sleep(for: .seconds(2))
        try await broker.restart()
        // mosquitto_sub gives up when its broker goes away; the same persistent session picks up what was queued.
        await subscription.stop()
        let resumed = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/4/departments/10/nodes/a/sightings", qos: 1,
            extraArguments: ["-c", "-i", "restart-watcher"])
        #expect(await scanner.waitForExit(timeout: .seconds(30)) == .exited(0), "\(scanner.transcript)")
        let stopped = scanner.stderrLines.first { $0.contains("scanner stopped") } ?? ""
        let made = Int(stopped.split(separator: " ").first { $0.hasPrefix("batches=") }?.dropFirst("batches=".count) ?? "") ?? -1
        #expect(made > 8, "\(stopped)")
        _ = await resumed.waitForLine(timeout: .seconds(10)) { Mesh.payload(of: $0)?["seq"] as? Int == made }
        await resumed.stop()
        let sequences = Set((subscription.lines + resumed.lines).compactMap { Mesh.payload(of: $0)?["seq"] as? Int })
        #expect(
            sequences == Set(1...max(made, 1)), "missing: \(Set(1...max(made, 1)).subtracting(sequences).sorted()) \(scanner.transcript)")
    }

    @Test("--help answers and exits 0")
    func help() async throws {
        for name in ["beacon-scanner", "beacon-coordinator", "beacon-monitor"] {
            let program = try Mesh.program(name, ["--help"])
            #expect(await program.waitForExit() == .exited(0))
            #expect(program.stdoutLines.contains { $0.contains("USAGE") }, "\(name)")
        }
    }

    /// Whether `subscription` received, within 10 s, as many batches as the exited `scanner` says it made (its
    /// "scanner stopped" line's `batches=`): a queued batch reaches the subscriber after the scanner's exit.
    static func received(everyBatchOf scanner: TestProcess, in subscription: Subscription) async -> Bool {
        let stopped = scanner.stderrLines.first { $0.contains("scanner stopped") } ?? ""
        guard let made = Int(stopped.split(separator: " ").first { $0.hasPrefix("batches=") }?.dropFirst("batches=".count) ?? "")
        else { return false }
        return await eventually(timeout: .seconds(10)) { subscription.lines.count >= made }
    }
}
