import BeaconMeshTesting
import Foundation
import Testing

/// A running coordinator against a real broker, fed with hand-written sighting batches through `mosquitto_pub`.
struct CoordinatorRun {
    let broker: MosquittoBroker
    let directory: String
    let config: String
    var coordinator: TestProcess
    let events: Subscription

    /// A broker and a coordinator (run with `arguments` after its config) in a new folder, or in `directory`.
    static func start(
        extraConfig: String = "", arguments: [String] = [], directory: String? = nil,
        brokerConfiguration: [String] = [], persistentBroker: Bool = false
    ) async throws -> CoordinatorRun {
        let broker = try await MosquittoBroker.start(persistence: persistentBroker, extraConfiguration: brokerConfiguration)
        let directory = try directory ?? Mesh.temporaryDirectory()
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: broker.url, extra: extraConfig)
        let events = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/1/events", qos: 1)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config] + arguments)
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
        try #require(running != nil, "\(coordinator.transcript)")
        try await Task.sleep(for: .milliseconds(300))
        return CoordinatorRun(broker: broker, directory: directory, config: config, coordinator: coordinator, events: events)
    }

    /// Sends `count` batches, one every `every`, from node `a` of `department` with one sighting of `minor`, from a
    /// node whose clock is `clockAhead` milliseconds ahead of ours.
    func send(
        department: Int, minor: Int, boot: String = "b00t", from firstSeq: Int, count: Int, every: Duration = .milliseconds(250),
        clockAhead: Int64 = 0
    ) async throws {
        try await TopicPublisher.paced(
            port: broker.port, topic: "beaconmesh/v1/stores/1/departments/\(department)/nodes/a/sightings", count: count,
            every: every
        ) { index in
            Mesh.batch(
                store: 1, department: department, boot: boot, seq: firstSeq + index, minor: minor,
                at: Mesh.nowMilliseconds + clockAhead)
        }
    }

    func events(ofType type: String) -> [[String: Any]] {
        events.lines.compactMap(Mesh.payload(of:)).filter { $0["type"] as? String == type }
    }

    func waitForEvent(_ type: String, timeout: Duration = .seconds(10)) async -> [String: Any]? {
        guard let line = await events.waitForLine(timeout: timeout, where: { $0.contains("\"type\":\"\(type)\"") }) else { return nil }
        return Mesh.payload(of: line)
    }

    /// Whether `members list` (run beside the coordinator, on its database) counts `visits` for `member`.
    func registryCounts(_ member: String, visits: Int) async -> Bool {
        guard let list = try? Mesh.program("beacon-coordinator", ["members", "list", "--db", directory + "/mesh.sqlite"]),
            await list.waitForExit() == .exited(0)
        else { return false }
        return list.stdoutLines.contains { $0.hasPrefix(member + " ") && $0.contains(" \(visits) ") }
    }

    /// Stops everything; the events seen must read as the contract orders them (`EventGrammar`).
    func stop() async {
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        await events.stop()
        await broker.stop()
        let broken = EventGrammar.violations(inLines: events.lines)
        #expect(broken.isEmpty, "events out of the contract's order: \(broken)\n\(events.lines.joined(separator: "\n"))")
    }
}

@Suite("beacon-coordinator end to end", .serialized)
struct CoordinatorEndToEndTests {
    @Test("a member heard in Clothing is greeted with name, drink and visit count, then leaves after exitAfter")
    func arriveAndLeave() async throws {
        let run = try await CoordinatorRun.start()
        // Twelve batches 250 ms apart: about 3 s of readings, longer when a loaded machine is slow to start each
        // mosquitto_pub — the dwell is checked against the time the readings really spanned.
        let sendingStarted = ContinuousClock.now
        try await run.send(department: 10, minor: 1, from: 1, count: 12)
        let sendingTook = ContinuousClock.now - sendingStarted
        let arrived = try #require(await run.waitForEvent("arrived"), "\(run.coordinator.transcript)")
        let member = try #require(arrived["member"] as? [String: Any])
        #expect(member["id"] as? String == "ana")
        #expect(member["name"] as? String == "Ana Souza")
        #expect(member["favoriteDrink"] as? String == "Flat white")
        #expect(arrived["department"] as? Int == 10)
        #expect(arrived["departmentName"] as? String == "Clothing")
        #expect(arrived["greeting"] as? String == "Welcome back, Ana Souza! The usual Flat white?")
        let visit = try #require(arrived["visit"] as? [String: Any])
        #expect(visit["number"] as? Int == 12)
        #expect(visit["previousAt"] as? Int == 1_763_683_200_000)
        for field in ["id", "store", "at"] { #expect(arrived[field] != nil, "missing \(field)") }
        // Why she was placed in Clothing, and how surely.
        let confidence = try #require(arrived["confidence"] as? Double, "no confidence: \(arrived)")
        #expect((0...1).contains(confidence))
        #expect((arrived["reason"] as? String).map { !$0.isEmpty } == true, "no reason: \(arrived)")

        let presence = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/1/presence")
        let snapshot = await presence.waitForLine(timeout: .seconds(5)) { $0.contains("\"ana\"") }
        #expect(snapshot != nil, "the retained snapshot shows Ana")
        #expect(snapshot?.contains("\"confidence\":") == true, "the snapshot says how sure: \(snapshot ?? "")")
        await presence.stop()

        let left = try #require(await run.waitForEvent("left", timeout: .seconds(10)))
        #expect((left["member"] as? [String: Any])?["id"] as? String == "ana")
        #expect(left["department"] as? Int == 10)
        // The visit runs from the arrival (after the 1 s settling; later on a starved machine) to the last reading,
        // rounded to whole seconds: never longer than the readings spanned.
        let longest = Int((Double(sendingTook.components.seconds) + Double(sendingTook.components.attoseconds) * 1e-18).rounded(.up))
        #expect(
            (left["dwellSeconds"] as? Int).map { $0 >= 0 && $0 <= longest } == true,
            "dwell: \(String(describing: left["dwellSeconds"])), readings sent over \(sendingTook)")
        #expect(run.events(ofType: "arrived").count == 1)
        #expect(run.events(ofType: "promo").count == 1, "the Clothing promo fired once")

        let after = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/1/presence")
        let empty = await after.waitForLine(timeout: .seconds(5)) { $0.contains("\"members\":[]") }
        #expect(empty != nil, "the retained snapshot is empty after the member left")
        await after.stop()
        await run.stop()
    }

    @Test(
        "Clothing → Housewares → exit gives exactly arrived(10), moved(10→20), left, in order; ±3 dB jitter between two departments gives no move"
    )
    func walkAndJitter() async throws {
        let run = try await CoordinatorRun.start()
        var seq = 0
        /// One batch from each of Clothing's and Housewares' nodes, then a pause: 4 readings a second per node.
        func step(minor: Int, clothing: Double, housewares: Double) async throws {
            seq += 1
            let now = Mesh.nowMilliseconds
            for (department, rssi) in [(10, clothing), (20, housewares)] {
                try await MosquittoClients.publish(
                    port: run.broker.port, topic: "beaconmesh/v1/stores/1/departments/\(department)/nodes/a/sightings",
                    string: Mesh.batch(store: 1, department: department, seq: seq, minor: minor, rssi: rssi, at: now), qos: 1)
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        func story(of member: String) -> [String] {
            run.events.lines.compactMap(Mesh.payload(of:)).filter { ($0["member"] as? [String: Any])?["id"] as? String == member }
                .compactMap { event in
                    switch event["type"] as? String {
                    case "arrived": "arrived \(event["department"] as? Int ?? -1)"
                    case "moved": "moved \(event["from"] as? Int ?? -1)→\(event["to"] as? Int ?? -1)"
                    case "left": "left \(event["department"] as? Int ?? -1)"
                    default: nil
                    }
                }
        }

        // Ana (minor 1) in Clothing, then Housewares (a 20 dB swing), then gone.
        for _ in 0..<8 { try await step(minor: 1, clothing: -55, housewares: -75) }
        for _ in 0..<12 { try await step(minor: 1, clothing: -75, housewares: -55) }
        _ = await run.waitForEvent("left", timeout: .seconds(10))
        #expect(story(of: "ana") == ["arrived 10", "moved 10→20", "left 20"], "\(run.events.lines)")

        // Zoë (minor 4) on the boundary: equal means, each node ±3 dB at random, for 6 s.
        var random: UInt64 = 0x2545_F491_4F6C_DD1D
        func jitter() -> Double {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(random >> 33) / Double(1 << 31) * 6 - 3
        }
        for _ in 0..<24 { try await step(minor: 4, clothing: -60 + jitter(), housewares: -60 + jitter()) }
        // Her leaving is her last event: a move would have been published before it.
        #expect(await eventually(timeout: .seconds(10)) { story(of: "zoe").last?.hasPrefix("left") == true }, "\(run.events.lines)")
        let zoe = story(of: "zoe")
        #expect(zoe.count == 2 && zoe.first?.hasPrefix("arrived") == true && zoe.last?.hasPrefix("left") == true, "\(zoe)")
        #expect(!zoe.contains { $0.hasPrefix("moved") })
        await run.stop()
    }

    @Test("garbage on every subscribed topic is dropped, counted and logged once; the coordinator keeps working")
    func garbageIsDropped() async throws {
        let run = try await CoordinatorRun.start()
        let sightings = "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings"
        let status = "beaconmesh/v1/stores/1/departments/10/nodes/a/status"
        for payload in ["not json", "not json either", "{\"v\":1", "[]", "{\"v\":7}"] {
            try await MosquittoClients.publish(port: run.broker.port, topic: sightings, string: payload, qos: 1)
        }
        try await MosquittoClients.publish(port: run.broker.port, topic: status, string: "{\"v\":1,\"state\":\"sideways\"}", qos: 1)
        try await MosquittoClients.publish(
            port: run.broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/BAD/sightings",
            string: Mesh.batch(store: 1, department: 10, seq: 1, minor: 1, at: Mesh.nowMilliseconds), qos: 1)
        try await MosquittoClients.publish(
            port: run.broker.port, topic: "beaconmesh/v1/stores/1/departments/20/nodes/a/sightings",
            string: Mesh.batch(store: 1, department: 10, seq: 1, minor: 1, at: Mesh.nowMilliseconds), qos: 1)
        try await MosquittoClients.publish(
            port: run.broker.port, topic: sightings,
            payload: [UInt8](repeating: 0x7B, count: 300 * 1024), qos: 1)
        try await run.send(department: 10, minor: 1, from: 1, count: 8)
        #expect(await run.waitForEvent("arrived") != nil, "the coordinator still works after garbage")
        let log = run.coordinator.stderrLines.filter { $0.contains("dropped a message") }
        #expect(log.filter { $0.contains("reason=invalid-json") }.count == 1, "logged once per reason: \(log)")
        for reason in ["unknown-version", "wrong-type", "topic-mismatch", "bad-topic", "too-large"] {
            #expect(log.contains { $0.contains("reason=\(reason)") }, "\(reason) not logged: \(log)")
        }
        #expect(run.coordinator.isRunning)
        await run.stop()
    }

    @Test("kill -9 of the coordinator mid-visit and a restart greet nobody twice and keep the visit count")
    func restartGreetsNobodyTwice() async throws {
        var run = try await CoordinatorRun.start()
        try await run.send(department: 10, minor: 1, from: 1, count: 6)
        #expect(await run.waitForEvent("arrived") != nil)
        // Killed once her arrival is written (the count goes from 11 to 12 with it).
        #expect(await eventually(timeout: .seconds(10), interval: .milliseconds(200)) { await run.registryCounts("ana", visits: 12) })
        run.coordinator.send(SIGKILL)
        _ = await run.coordinator.waitForExit()
        let status = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/status")
        #expect(await status.waitForLine(timeout: .seconds(5)) { $0.contains("\"offline\"") } != nil, "last will says offline")
        await status.stop()

        run.coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", run.config])
        #expect(await run.coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        try await run.send(department: 10, minor: 1, from: 7, count: 8)
        let left = await run.waitForEvent("left", timeout: .seconds(10))
        #expect(left != nil)
        #expect(run.events(ofType: "arrived").count == 1, "no second greeting after the restart")
        #expect(run.events(ofType: "promo").count == 1, "no second promo after the restart")
        await run.stop()

        let list = try Mesh.program("beacon-coordinator", ["members", "list", "--db", run.directory + "/mesh.sqlite"])
        #expect(await list.waitForExit() == .exited(0))
        #expect(list.stdoutLines.contains { $0.hasPrefix("ana") && $0.contains(" 12 ") }, "\(list.stdoutLines)")
    }

    @Test("a member added with the members command while the coordinator runs is greeted without a restart")
    func registryChangesWithoutRestart() async throws {
        let run = try await CoordinatorRun.start()
        let add = try Mesh.program(
            "beacon-coordinator",
            [
                "members", "add", "newbie", "--name", "New Bee", "--drink", "Oolong", "--beacon", "ibeacon:\(Mesh.uuid):1:9",
                "--db", run.directory + "/mesh.sqlite",
            ])
        #expect(await add.waitForExit() == .exited(0), "\(add.transcript)")
        #expect(add.stdoutLines == ["added newbie"])
        #expect(await run.coordinator.readRegistryChange(changed: "newbie"), "\(run.coordinator.transcript)")
        try await run.send(department: 20, minor: 9, from: 1, count: 8)
        let arrived = try #require(await run.waitForEvent("arrived"), "\(run.coordinator.transcript)")
        #expect((arrived["member"] as? [String: Any])?["name"] as? String == "New Bee")
        #expect(arrived["greeting"] as? String == "Welcome back, New Bee! The usual Oolong?")
        await run.stop()
    }

    @Test("the cafe's Free Latte fires only at immediate proximity, once")
    func freeLatteAtImmediateOnly() async throws {
        let run = try await CoordinatorRun.start(
            extraConfig: """
                  - id: 9
                    name: PubNub Cafe
                    departments:
                      - {id: 6, name: Counter, promo: {id: latte, title: "Free Latte!", message: "Come on down for a hot deal!", proximity: immediate, dwell: 0s}}
                """)
        let cafe = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/9/events", qos: 1)
        let offers = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/members/+/offers", qos: 1)
        func send(_ proximity: String, from first: Int) async throws {
            try await TopicPublisher.paced(
                port: run.broker.port, topic: "beaconmesh/v1/stores/9/departments/6/nodes/a/sightings", count: 8,
                every: .milliseconds(250)
            ) { index in
                Mesh.batch(store: 9, department: 6, seq: first + index, major: 1, minor: 4, proximity: proximity, at: Mesh.nowMilliseconds)
            }
        }
        try await send("near", from: 1)
        #expect(await cafe.waitForLine(timeout: .seconds(5)) { $0.contains("\"arrived\"") } != nil)
        let firstImmediate = Mesh.nowMilliseconds
        try await send("immediate", from: 9)
        let promo = await cafe.waitForLine(timeout: .seconds(5)) { $0.contains("\"promo\"") }
        #expect(promo?.contains("Free Latte!") == true)
        // Had a latte fired while she was only near, it would be the one promo (the cooldown) and from before.
        let firedAt = try #require(promo.flatMap(Mesh.payload(of:))?["at"] as? Int, "\(cafe.lines)")
        #expect(Int64(firedAt) >= firstImmediate, "no latte while only near: \(cafe.lines)")
        let offer = await offers.waitForLine(timeout: .seconds(5)) { $0.hasPrefix("beaconmesh/v1/members/zoe/offers") }
        #expect(offer?.contains("\"department\":6") == true)
        try await send("immediate", from: 17)
        #expect(cafe.lines.filter { $0.contains("\"promo\"") }.count == 1, "once per cooldown")
        await cafe.stop()
        await offers.stop()
        await run.stop()
    }

    @Test("a scanner killed with SIGKILL stops counting at once: node offline event and snapshot, member moves on")
    func nodeKilledStopsCounting() async throws {
        let run = try await CoordinatorRun.start()
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "30", "--broker", run.broker.url, "--source", "sim", "--sim-route", "30",
                "--sim-outside", "0s",
            ])
        #expect(await run.waitForEvent("arrived", timeout: .seconds(15)) != nil, "\(scanner.transcript)")
        scanner.send(SIGKILL)
        let offline = await run.events.waitForLine(timeout: .seconds(5)) { $0.contains("\"type\":\"node\"") && $0.contains("\"offline\"") }
        #expect(offline?.contains("\"department\":30") == true)
        let presence = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/stores/1/presence")
        let snapshot = await presence.waitForLine(timeout: .seconds(5)) { $0.contains("\"node\":\"a\",\"state\":\"offline\"") }
        #expect(snapshot != nil, "the snapshot shows the node offline")
        await presence.stop()
        _ = await scanner.waitForExit()
        await run.stop()
    }

    @Test("sightings published while the coordinator is down are handled when it comes back (persistent session)")
    func queuedWhileDown() async throws {
        var run = try await CoordinatorRun.start()
        run.coordinator.send(SIGKILL)
        _ = await run.coordinator.waitForExit()
        try await run.send(department: 20, minor: 4, from: 1, count: 6, every: .milliseconds(100))
        run.coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", run.config])
        let arrived = await run.waitForEvent("arrived", timeout: .seconds(15))
        #expect((arrived?["member"] as? [String: Any])?["id"] as? String == "zoe", "\(run.coordinator.transcript)")
        #expect(arrived?["department"] as? Int == 20)
        await run.stop()
    }

    @Test("SIGTERM publishes the coordinator's offline status and exits 0")
    func cleanShutdown() async throws {
        let run = try await CoordinatorRun.start()
        let status = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/status", qos: 1)
        #expect(await status.waitForLine(timeout: .seconds(5)) { $0.contains("\"online\"") && $0.contains("\"stores\":[1]") } != nil)
        #expect(await run.coordinator.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0), "\(run.coordinator.transcript)")
        #expect(await status.waitForLine(timeout: .seconds(5)) { $0.contains("\"offline\"") } != nil)
        await status.stop()
        await run.stop()
    }

    @Test("after the broker saw the coordinator vanish (its will: offline), the reconnected coordinator says online again")
    func onlineAgainAfterLostConnection() async throws {
        let run = try await CoordinatorRun.start()
        let status = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/status", qos: 1)
        #expect(await status.waitForLine(timeout: .seconds(5)) { $0.contains("\"online\"") } != nil)
        // Frozen past 1.5 × its 10 s keep-alive, the coordinator is declared gone and its will goes out.
        run.coordinator.send(SIGSTOP)
        #expect(await status.waitForLine(timeout: .seconds(25)) { $0.contains("\"offline\"") } != nil, "\(status.lines)")
        run.coordinator.send(SIGCONT)
        let onlineAgain = await eventually(timeout: .seconds(15)) {
            status.lines.filter { $0.contains("\"online\"") }.count >= 2 ? true : nil
        }
        #expect(onlineAgain == true, "\(status.lines)")
        #expect(status.lines.last?.contains("\"online\"") == true, "\(status.lines)")
        await status.stop()
        await run.stop()
    }

    @Test("a config with an unknown key exits 2 with one line naming the key and its line")
    func unknownConfigKey() async throws {
        let directory = try Mesh.temporaryDirectory()
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: "mqtt://127.0.0.1:1", extra: "colour: blue")
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await coordinator.waitForExit() == .exited(2))
        let errors = coordinator.stderrLines.filter { !$0.isEmpty }
        #expect(errors.count == 1)
        #expect(errors.first?.contains("unknown key 'colour'") == true, "\(errors)")
        #expect(errors.first?.contains("coordinator.yaml:") == true, "\(errors)")
    }

    @Test("a second coordinator on the same SQLite registry exits 2 with one line saying why; the first goes on")
    func secondCoordinatorOnSQLite() async throws {
        let broker = try await MosquittoBroker.start()
        let directory = try Mesh.temporaryDirectory()
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: broker.url)
        let first = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await first.waitForLine(in: .stderr, timeout: .seconds(20)) { $0.contains("coordinator running") } != nil)
        let second = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await second.waitForExit() == .exited(2), "\(second.transcript)")
        let errors = second.stderrLines.filter { !$0.isEmpty }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.contains("another coordinator runs on the SQLite registry") == true, "\(errors)")
        #expect(first.isRunning)
        #expect(await first.stop(with: SIGTERM) == .exited(0))
        // Once the first has stopped, a coordinator starts on the file again.
        let again = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await again.waitForLine(in: .stderr, timeout: .seconds(20)) { $0.contains("coordinator running") } != nil)
        await again.stop(with: SIGTERM)
        await broker.stop()
    }
}
