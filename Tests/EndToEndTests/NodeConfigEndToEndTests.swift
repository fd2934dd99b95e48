import BeaconMeshTesting
import Foundation
import Testing

/// Head office changes running nodes through the broker (the contract's "Node config" and `nodes list|set`): real
/// scanner processes, a real mosquitto, the real `beacon-coordinator nodes` commands and `mosquitto_pub`/`_sub`.
@Suite("node config from head office, end to end", .serialized)
struct NodeConfigEndToEndTests {
    static let tree = "beaconmesh/v1"

    static func statusTopic(_ department: Int, _ node: String = "a") -> String {
        "\(tree)/stores/1/departments/\(department)/nodes/\(node)/status"
    }

    /// The `config` of the latest retained status of a node in `lines` (`mosquitto_sub -v` lines), by level.
    static func config(in lines: [String], department: Int) -> [String: [String: Any]]? {
        guard let line = lines.last(where: { Mesh.topic(of: $0) == statusTopic(department) }), let status = Mesh.payload(of: line),
            let config = status["config"] as? [String: Any]
        else { return nil }
        return config.compactMapValues { $0 as? [String: Any] }
    }

    static func scanner(_ department: Int, broker: String, extra: [String] = []) throws -> TestProcess {
        try Mesh.program(
            "beacon-scanner",
            ["--store", "1", "--department", "\(department)", "--source", "sim", "--broker", broker, "--log-level", "info"] + extra)
    }

    static func nodes(_ arguments: [String]) async throws -> (TestProcess.ExitStatus?, TestProcess) {
        let process = try Mesh.program("beacon-coordinator", ["nodes"] + arguments)
        return (await process.waitForExit(timeout: .seconds(30)), process)
    }

    @Test(
        "nodes set changes two running scanners without a restart (health every 5 s, not 30), says so in their status; nodes list shows it; a bad key exits 2 and publishes nothing"
    )
    func setAndList() async throws {
        let broker = try await MosquittoBroker.start()
        let watch = try await MosquittoClients.subscribe(
            port: broker.port, filters: ["\(Self.tree)/stores/1/#"], qos: 1)
        let scanners = try [10, 20].map { try Self.scanner($0, broker: broker.url) }
        func finish() async {
            for scanner in scanners { _ = await scanner.stop(with: SIGTERM, timeout: .seconds(20)) }
            await watch.stop()
            await broker.stop()
        }
        for department in [10, 20] {
            let online = await watch.waitForLine(timeout: .seconds(15)) {
                $0.hasPrefix(Self.statusTopic(department)) && $0.contains("online")
            }
            try #require(online != nil, "\(scanners.map(\.transcript))")
        }

        let (set, setProcess) = try await Self.nodes(
            ["set", "--broker", broker.url, "--store", "1", "healthInterval=5s", "rssiAdjustment=-3.5"])
        #expect(set == .exited(0), "\(setProcess.transcript)")
        #expect(setProcess.stdoutLines.contains("1/10/a applied revision 1"), "\(setProcess.transcript)")
        #expect(setProcess.stdoutLines.contains("1/20/a applied revision 1"), "\(setProcess.transcript)")
        for department in [10, 20] {
            let store = Self.config(in: watch.lines, department: department)?["store"]
            #expect(store?["revision"] as? Int == 1 && store?["state"] as? String == "applied", "\(watch.lines.suffix(5))")
        }
        // Health now comes every 5 s: two reports of node 10 within 12 s (30 s before).
        let healthTopic = "\(Self.tree)/stores/1/departments/10/nodes/a/health"
        let before = watch.lines.filter { $0.hasPrefix(healthTopic) }.count
        let twoMore = await eventually(timeout: .seconds(12)) {
            watch.lines.filter { $0.hasPrefix(healthTopic) }.count >= before + 2 ? true : nil
        }
        #expect(twoMore == true, "health did not come every 5 s: \(watch.lines.filter { $0.hasPrefix(healthTopic) })")
        #expect(scanners[0].stderrLines.contains { $0.contains("node config applied") && $0.contains("-3.5") }, "\(scanners[0].transcript)")

        // A key no node takes, or a bad value: exit 2, one line naming it, nothing published.
        for (argument, named) in [("colour=red", "'colour' is not a node config setting"), ("flush=20s", "flush '20s' must be")] {
            let (bad, badProcess) = try await Self.nodes(["set", "--broker", broker.url, "--store", "1", argument])
            #expect(bad == .exited(2), "\(badProcess.transcript)")
            #expect(badProcess.stderrLines.count == 1 && badProcess.stderrLines.first?.contains(named) == true, "\(badProcess.transcript)")
        }
        // One node's own config, over the store's: only that node answers; the store's keys are kept.
        let (one, oneProcess) = try await Self.nodes(
            ["set", "--broker", broker.url, "--store", "1", "--department", "20", "--node", "a", "logLevel=debug"])
        #expect(one == .exited(0), "\(oneProcess.transcript)")
        #expect(
            oneProcess.stdoutLines.contains("1/20/a applied revision 1") && oneProcess.stdoutLines.count == 2, "\(oneProcess.transcript)")
        // A value only a node with a radio takes: both simulated nodes refuse it, exit 1 names them.
        let (refused, refusedProcess) = try await Self.nodes(["set", "--broker", broker.url, "--store", "1", "advertise=true"])
        #expect(refused == .exited(1), "\(refusedProcess.transcript)")
        let refusal = refusedProcess.stderrLines.joined()
        #expect(refusal.contains("1/10/a refused: advertise needs an hciN source") && refusal.contains("1/20/a refused"), "\(refusal)")
        let store10 = Self.config(in: watch.lines, department: 10)?["store"]
        #expect(store10?["revision"] as? Int == 2 && store10?["state"] as? String == "refused", "\(watch.lines.suffix(3))")

        // The retained config kept its keys (the refused advertise among them) and says revision 2.
        let retained = watch.lines.last { Mesh.topic(of: $0) == "\(Self.tree)/stores/1/nodes/config" }.flatMap(Mesh.payload)
        #expect(retained?["revision"] as? Int == 2)
        let settings = retained?["settings"] as? [String: Any]
        #expect(settings?["healthInterval"] as? String == "5s" && settings?["rssiAdjustment"] as? Double == -3.5, "\(settings ?? [:])")

        let (list, listProcess) = try await Self.nodes(["list", "--broker", broker.url, "--store", "1", "--json"])
        #expect(list == .exited(0), "\(listProcess.transcript)")
        let listed = try JSONSerialization.jsonObject(with: Data(listProcess.stdoutLines.joined().utf8)) as? [[String: Any]] ?? []
        #expect(listed.map { $0["department"] as? Int } == [10, 20], "\(listed)")
        #expect(listed.allSatisfy { $0["state"] as? String == "online" && ($0["version"] as? String)?.isEmpty == false })
        let node20 = listed.last?["config"] as? [String: Any]
        #expect((node20?["node"] as? [String: Any])?["state"] as? String == "applied", "\(listed)")
        let (table, tableProcess) = try await Self.nodes(["list", "--broker", broker.url])
        #expect(table == .exited(0) && tableProcess.stdoutLines.last == "2 nodes", "\(tableProcess.transcript)")
        await finish()
    }

    @Test(
        "a node config that is not JSON, has an unknown v or a lower revision is refused in the status and logged once; a node that starts while the broker is down applies the retained config when it connects"
    )
    func refusedAndLateNode() async throws {
        let broker = try await MosquittoBroker.start(persistence: true)
        let watch = try await MosquittoClients.subscribe(port: broker.port, filters: ["\(Self.tree)/stores/1/#"], qos: 1)
        let scanner = try Self.scanner(10, broker: broker.url)
        let online = await watch.waitForLine(timeout: .seconds(15)) { $0.hasPrefix(Self.statusTopic(10)) && $0.contains("online") }
        try #require(online != nil, "\(scanner.transcript)")
        let own = "\(Self.tree)/stores/1/departments/10/nodes/a/config"
        func publish(_ text: String) async throws {
            try await MosquittoClients.publish(port: broker.port, topic: own, string: text, qos: 1, retain: true)
        }
        func nodeLevel() async -> [String: Any]? {
            await eventually(timeout: .seconds(5)) { Self.config(in: watch.lines, department: 10)?["node"] }
        }
        try await publish(#"{"v":1,"revision":5,"at":1,"settings":{"minRssi":-90}}"#)
        let applied = await eventually(timeout: .seconds(5)) {
            Self.config(in: watch.lines, department: 10)?["node"]?["state"] as? String == "applied" ? true : nil
        }
        #expect(applied == true, "\(watch.lines.suffix(3))")
        for (payload, reason) in [
            ("{not json", "not valid JSON"), (#"{"v":7,"revision":6,"at":1,"settings":{}}"#, "unknown payload version"),
            (#"{"v":1,"revision":4,"at":1,"settings":{"minRssi":-80}}"#, "revision 4 is lower than the applied revision 5"),
            (#"{"v":1,"revision":6,"at":1,"settings":{"broker":"mqtt://elsewhere:1883"}}"#, "broker needs a restart"),
        ] {
            try await publish(payload)
            let refused = await eventually(timeout: .seconds(5)) { () -> String? in
                let node = Self.config(in: watch.lines, department: 10)?["node"]
                return node?["state"] as? String == "refused" ? node?["error"] as? String : nil
            }
            #expect(refused?.contains(reason) == true, "\(payload): \(refused ?? "no refusal") \(watch.lines.suffix(2))")
            // The next payload's refusal must be told apart from this one's.
            try await publish(#"{"v":1,"revision":5,"at":1,"settings":{"minRssi":-90}}"#)
            _ = await eventually(timeout: .seconds(5)) {
                Self.config(in: watch.lines, department: 10)?["node"]?["state"] as? String == "applied" ? true : nil
            }
        }
        // The same refused payload delivered again (a reconnection) is logged once.
        try await publish("{not json")
        try await publish("{not json")
        _ = await nodeLevel()
        try await Task.sleep(for: .milliseconds(500))
        let logged = scanner.stderrLines.filter { $0.contains("node config refused") && $0.contains("not valid JSON") }
        #expect(logged.count == 1, "\(scanner.transcript)")
        _ = await scanner.stop(with: SIGTERM, timeout: .seconds(20))

        // The store's config is retained on a broker that then goes away; a node starts meanwhile and applies it
        // once the broker is back.
        let (set, setProcess) = try await Self.nodes(["set", "--broker", broker.url, "--store", "1", "flush=250ms"])
        #expect(set == .exited(0), "\(setProcess.transcript)")
        await watch.stop()
        await broker.stop()
        let late = try Self.scanner(30, broker: broker.url)
        try await Task.sleep(for: .seconds(2))
        try await broker.start()
        let lateWatch = try await MosquittoClients.subscribe(port: broker.port, filters: [Self.statusTopic(30)], qos: 1)
        let lateApplied = await lateWatch.waitForLine(timeout: .seconds(20)) {
            $0.contains(#""store":{"revision":1,"state":"applied""#) && $0.contains("online")
        }
        #expect(lateApplied != nil, "\(lateWatch.lines) \(late.transcript)")
        _ = await late.stop(with: SIGTERM, timeout: .seconds(20))
        await lateWatch.stop()
        await broker.stop()
    }
}
