import BeaconMeshTesting
import Foundation
import Testing

/// The production broker profile with provisioned credentials, attacked and used with the real mosquitto clients.
///
/// mosquitto 2.0 drops a denied publish without telling the publisher, so a denial is proved the only way a
/// shop would notice it: an authorised subscriber never receives the message, while a control message published
/// after it does arrive (the broker handles one connection's messages in order).
@Suite("broker security: the production profile with a real mosquitto", .serialized)
struct BrokerSecurityTests {
    static let tree = "beaconmesh/v1"

    /// A running production broker with credentials for two nodes, two monitors, a coordinator and two members.
    func secureBroker() async throws -> ProfileBroker {
        let broker = try await ProfileBroker()
        try await broker.provision(["node", "--store", "1", "--department", "10", "--node", "a"])
        try await broker.provision(["node", "--store", "2", "--department", "10"])
        try await broker.provision(["monitor", "--store", "1"])
        try await broker.provision(["monitor", "--store", "2"])
        try await broker.provision(["coordinator", "--id", "e2e", "--store", "1"])
        try await broker.provision(["member", "ana"])
        try await broker.provision(["member", "ben"])
        try await broker.start()
        return broker
    }

    /// Runs `mosquitto_pub` once and returns how it ended and what it said (for attempts expected to fail).
    func attemptPublish(_ broker: ProfileBroker, topic: String, message: String, arguments: [String]) async throws -> (
        TestProcess.ExitStatus?, String
    ) {
        let process = try TestProcess(
            executable: try MosquittoClients.executable("mosquitto_pub"),
            arguments: [
                "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", topic, "-m", message, "-q", "1", "-i",
                "attempt-\(UUID().uuidString.prefix(8))",
            ] + arguments)
        let status = await process.waitForExit(timeout: .seconds(10))
        if status == nil { process.send(SIGKILL) }
        return (status, process.transcript)
    }

    @Test("a scanner of store 1 cannot publish to store 2, to another node or to events; its own sightings get through")
    func scannerStaysInItsLane() async throws {
        let broker = try await secureBroker()
        let store1 = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/1/#", qos: 1,
            extraArguments: try broker.login("monitor-1"))
        let store2 = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/2/#", qos: 1,
            extraArguments: try broker.login("monitor-2"))
        let scanner = try broker.login("node-1-10-a")
        for (topic, message) in [
            ("\(Self.tree)/stores/2/departments/10/nodes/a/sightings", "denied: store 2"),
            ("\(Self.tree)/stores/1/events", "denied: events"),
            ("\(Self.tree)/stores/1/presence", "denied: presence"),
            ("\(Self.tree)/stores/1/departments/20/nodes/a/sightings", "denied: another department"),
            ("\(Self.tree)/stores/1/departments/10/nodes/b/status", "denied: another node"),
            ("\(Self.tree)/members/ana/offers", "denied: offers"),
        ] {
            try await MosquittoClients.publish(port: broker.port, topic: topic, string: message, qos: 1, extraArguments: scanner)
        }
        for leaf in ["sightings", "status", "health"] {
            try await MosquittoClients.publish(
                port: broker.port, topic: "\(Self.tree)/stores/1/departments/10/nodes/a/\(leaf)",
                string: "allowed: own \(leaf)", qos: 1, extraArguments: scanner)
        }
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/stores/2/departments/10/nodes/a/sightings",
            string: "allowed: store 2's own node", qos: 1, extraArguments: try broker.login("node-2-10-a"))
        #expect(await store1.waitForLine { $0.hasSuffix("allowed: own health") } != nil, "\(store1.lines)\n\(broker.log)")
        #expect(await store2.waitForLine { $0.hasSuffix("allowed: store 2's own node") } != nil, "\(store2.lines)")
        // The allowed messages came last: the broker handed each subscriber anything before them first.
        await store1.stop()
        await store2.stop()
        #expect(store1.lines.filter { $0.contains("allowed") }.count == 3, "\(store1.lines)")
        #expect(!(store1.lines + store2.lines).contains { $0.contains("denied") }, "\(store1.lines + store2.lines)")
    }

    @Test("a monitor cannot publish at all; a member app reads only its own offers")
    func monitorsAndMembers() async throws {
        let broker = try await secureBroker()
        let store1 = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/1/#", qos: 1,
            extraArguments: try broker.login("monitor-1"))
        let anaEverything = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/members/+/offers", qos: 1,
            extraArguments: try broker.login("ana"))
        // Her own offers beside Ben's: the offer for her, published after Ben's, shows Ben's would have come first.
        let anaSpyingOnBen = try await MosquittoClients.subscribe(
            port: broker.port, filters: ["\(Self.tree)/members/ben/offers", "\(Self.tree)/members/ana/offers"], qos: 1,
            extraArguments: try broker.login("ana"))
        let ben = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/members/ben/offers", qos: 1,
            extraArguments: try broker.login("ben"))
        let monitor = try broker.login("monitor-1")
        for topic in ["stores/1/events", "stores/1/presence", "stores/1/departments/10/nodes/a/status", "members/ana/offers"] {
            try await MosquittoClients.publish(
                port: broker.port, topic: "\(Self.tree)/\(topic)", string: "denied: monitor wrote \(topic)",
                qos: 1, extraArguments: monitor)
        }
        let coordinator = try broker.login("coordinator-e2e")
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/members/ben/offers", string: "offer for ben",
            qos: 1, extraArguments: coordinator)
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/members/ana/offers", string: "offer for ana",
            qos: 1, extraArguments: coordinator)
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/stores/1/events", string: "allowed: coordinator event",
            qos: 1, extraArguments: coordinator)
        #expect(await store1.waitForLine { $0.hasSuffix("allowed: coordinator event") } != nil, "\(broker.log)")
        #expect(await anaEverything.waitForLine { $0.hasSuffix("offer for ana") } != nil)
        #expect(await ben.waitForLine { $0.hasSuffix("offer for ben") } != nil)
        #expect(await anaSpyingOnBen.waitForLine { $0.hasSuffix("offer for ana") } != nil)
        for subscription in [store1, anaEverything, anaSpyingOnBen, ben] { await subscription.stop() }
        #expect(!store1.lines.contains { $0.contains("denied") }, "\(store1.lines)")
        #expect(anaEverything.lines == ["\(Self.tree)/members/ana/offers offer for ana"], "ana sees only her own offers")
        #expect(anaSpyingOnBen.lines == ["\(Self.tree)/members/ana/offers offer for ana"], "\(anaSpyingOnBen.lines)")
    }

    @Test(
        "head office's dashboard credential (provision dashboard): the real dashboard reads every store through it; it reads sightings (its survey page's list) but no member's ranging, and publishes nothing but survey marks"
    )
    func dashboardCredentialReadsEveryStoreAndWritesOnlySurveyMarks() async throws {
        let broker = try await secureBroker()
        try await broker.provision(["coordinator", "--id", "e2e2", "--store", "2"])
        let lines = try await broker.provision(["dashboard"])
        #expect(lines.first?.hasPrefix("dashboard-hq: created; password in ") == true, "\(lines)")
        try await broker.restart()  // the broker reads the new credentials at start (or on a reload)
        let port = try FreePort.next()
        let dashboard = try await DashboardMesh.startDashboard(
            brokerURL: broker.url, port: port,
            extra: ["--cafile", broker.caFile, "--username", "dashboard-hq", "--password-file", broker.credentialFile(of: "dashboard-hq")])
        for (store, user) in [(1, "coordinator-e2e"), (2, "coordinator-e2e2")] {
            let now = Mesh.nowMilliseconds
            try await MosquittoClients.publish(
                port: broker.port, topic: "\(Self.tree)/stores/\(store)/presence",
                string: #"{"v":1,"store":\#(store),"name":"Store \#(store)","updatedAt":\#(now),"members":[],"occupancy":{},"nodes":[]}"#,
                qos: 1, retain: true, extraArguments: try broker.login(user))
        }
        for store in [1, 2] {
            let seen = await eventually(timeout: .seconds(10), interval: .milliseconds(200)) { () -> Bool? in
                let reply = try? await HTTP.get("http://127.0.0.1:\(port)/api/stores/\(store)/presence")
                return reply?.status == 200 && reply?.body.contains("\"Store \(store)\"") == true ? true : nil
            }
            #expect(seen == true, "the dashboard never read store \(store) through its credential: \(dashboard.transcript)\n\(broker.log)")
        }
        _ = await dashboard.stop(with: SIGTERM, timeout: .seconds(10))

        // What it may not do: read a member's ranging, or write anything but a survey mark (its survey page's). It reads
        // sightings: its survey page lists the beacons a store hears.
        let asDashboard = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/1/#", qos: 1, extraArguments: try broker.login("dashboard-hq"))
        let monitor = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/1/#", qos: 1, extraArguments: try broker.login("monitor-1"))
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/stores/1/departments/10/nodes/a/sightings", string: "shown: sightings",
            qos: 1, extraArguments: try broker.login("node-1-10-a"))
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/stores/1/members/ana/ranging", string: "hidden: ranging", qos: 1,
            extraArguments: try broker.login("ana"))
        for topic in ["stores/1/events", "stores/1/presence", "stores/1/checkins"] {
            try await MosquittoClients.publish(
                port: broker.port, topic: "\(Self.tree)/\(topic)", string: "denied: dashboard wrote \(topic)", qos: 1,
                extraArguments: try broker.login("dashboard-hq"))
        }
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/stores/1/survey", string: "allowed: dashboard survey mark", qos: 1,
            extraArguments: try broker.login("dashboard-hq"))
        try await MosquittoClients.publish(
            port: broker.port, topic: "\(Self.tree)/stores/1/events", string: "allowed: coordinator event", qos: 1,
            extraArguments: try broker.login("coordinator-e2e"))
        #expect(await asDashboard.waitForLine { $0.hasSuffix("allowed: coordinator event") } != nil, "\(broker.log)")
        #expect(await monitor.waitForLine { $0.hasSuffix("allowed: coordinator event") } != nil)
        #expect(monitor.lines.contains("\(Self.tree)/stores/1/survey allowed: dashboard survey mark"), "\(monitor.lines)")
        await asDashboard.stop()
        await monitor.stop()
        #expect(!asDashboard.lines.contains { $0.contains("hidden: ranging") }, "the dashboard read ranging: \(asDashboard.lines)")
        #expect(monitor.lines.contains { $0.hasSuffix("hidden: ranging") }, "control: the monitor does read ranging")
        #expect(asDashboard.lines.contains { $0.hasSuffix("shown: sightings") }, "the survey page's sightings: \(asDashboard.lines)")
        #expect(!(asDashboard.lines + monitor.lines).contains { $0.contains("denied") }, "\(monitor.lines)")
    }

    @Test("anonymous clients, wrong passwords and unknown users are refused")
    func refusedLogins() async throws {
        let broker = try await secureBroker()
        let topic = "\(Self.tree)/stores/1/departments/10/nodes/a/status"
        for (what, arguments) in [
            ("anonymous", ["--cafile", broker.caFile]),
            ("wrong password", ["--cafile", broker.caFile, "-u", "node-1-10-a", "-P", "not-the-password"]),
            ("unknown user", ["--cafile", broker.caFile, "-u", "node-9-9-z", "-P", try broker.password(of: "node-1-10-a")]),
        ] {
            let (status, output) = try await attemptPublish(broker, topic: topic, message: what, arguments: arguments)
            #expect(status != nil && status != .exited(0), "\(what): \(output)")
            #expect(output.contains("not authorised"), "\(what): \(output)")
        }
    }

    @Test("a client that does not trust the private CA refuses the broker; plain MQTT gets nowhere")
    func untrustedBroker() async throws {
        let broker = try await secureBroker()
        let otherCA = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: otherCA) }
        try await RepositoryScript.run("deploy/make-certificates.sh", ["--out", otherCA, "127.0.0.1"])
        let password = try broker.password(of: "node-1-10-a")
        let topic = "\(Self.tree)/stores/1/departments/10/nodes/a/status"
        for (what, arguments) in [
            ("the system's CAs only", ["--capath", "/etc/ssl/certs", "-u", "node-1-10-a", "-P", password]),
            ("another private CA", ["--cafile", otherCA + "/ca.pem", "-u", "node-1-10-a", "-P", password]),
            ("no TLS at all", ["-u", "node-1-10-a", "-P", password]),
        ] {
            let (status, output) = try await attemptPublish(broker, topic: topic, message: what, arguments: arguments)
            #expect(status != nil && status != .exited(0), "\(what) must fail: \(output)")
        }

        // BeaconMesh's own client verifies too: a scanner without --cafile never gets its status onto the broker.
        let watcher = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/1/#", qos: 1,
            extraArguments: try broker.login("monitor-1"))
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "10", "--source", "sim", "--broker", broker.url,
                "--username", "node-1-10-a", "--password-file", broker.credentialFile(of: "node-1-10-a"),
            ])
        // Its handshake refused the broker's certificate, and it went on retrying (the refusal again, at the next
        // attempt): had it got through, its status would be retained and the watcher would have it.
        let refused = await eventually(timeout: .seconds(20)) {
            scanner.stderrLines.filter { $0.contains("certificate verify failed") }.count >= 2
        }
        #expect(refused, "\(scanner.transcript)")
        await scanner.stop(with: SIGKILL, timeout: .seconds(5))
        await watcher.stop()
        #expect(watcher.lines.isEmpty, "\(watcher.lines)")
        #expect(
            broker.log.contains("certificate") || broker.log.contains("ssl") || broker.log.contains("SSL")
                || broker.log.contains("protocol error"),
            "the broker logs the refused handshakes: \(broker.log)")
    }

    @Test("provision revoke --reload: the credential stops working without restarting the broker")
    func revokeAndReload() async throws {
        let broker = try await secureBroker()
        try await broker.provision(["node", "--store", "1", "--department", "30", "--reload", "--broker-pid-file", broker.pidFile])
        let topic = "\(Self.tree)/stores/1/departments/30/nodes/a/status"
        let works = await Self.retrying(for: .seconds(5)) {
            let result = try? await attemptPublish(broker, topic: topic, message: "hello", arguments: try broker.login("node-1-30-a"))
            return result?.0 == .exited(0)
        }
        #expect(works, "a node provisioned with --reload can log in at once: \(broker.log)")
        let password = try broker.password(of: "node-1-30-a")
        let output = try await broker.provision(["revoke", "node-1-30-a", "--reload", "--broker-pid-file", broker.pidFile])
        #expect(output.first == "node-1-30-a: revoked (password entry, ACL block, credential file removed)", "\(output)")
        #expect(output.contains("mosquitto reloaded."))
        let refused = await Self.retrying(for: .seconds(5)) {
            let result = try? await attemptPublish(
                broker, topic: topic, message: "again",
                arguments: ["--cafile", broker.caFile, "-u", "node-1-30-a", "-P", password])
            return result.map { $0.0 != .exited(0) && $0.1.contains("not authorised") } ?? false
        }
        #expect(refused, "\(broker.log)")
    }

    @Test("the mesh runs end to end over TLS: sim and btsnoop scanners and the coordinator with provisioned credentials")
    func meshOverTLS() async throws {
        let broker = try await secureBroker()
        try await broker.provision(["node", "--store", "1", "--department", "20", "--reload", "--broker-pid-file", broker.pidFile])
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: broker.url)
        try Self.useCredentials(config: config, broker: broker, user: "coordinator-e2e")
        // Every simulated shopper of store 1 is a member, so somebody arrives within seconds.
        let members =
            ["id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt"]
            + [1, 2, 3, 4, 5, 101, 102, 103].map { "m\($0),Shopper \($0),,ibeacon:\(Mesh.uuid):1:\($0),,0,," }
        try members.joined(separator: "\n").write(toFile: directory + "/members.csv", atomically: true, encoding: .utf8)

        let events = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/1/events", qos: 1,
            extraArguments: try broker.login("monitor-1"))
        let coordinator = try TestProcess(
            executable: try BuiltProducts.path(of: "beacon-coordinator"),
            arguments: ["run", "--config", config], currentDirectory: directory)
        defer { coordinator.send(SIGKILL) }
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
        try #require(running != nil, "\(coordinator.transcript)\n\(broker.log)")

        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "10", "--source", "sim", "--sim-route", "10", "--sim-outside", "0s", "--broker", broker.url,
                "--cafile", broker.caFile, "--username", "node-1-10-a", "--password-file", broker.credentialFile(of: "node-1-10-a"),
            ])
        defer { scanner.send(SIGKILL) }
        let arrived = await events.waitForLine(timeout: .seconds(20)) { $0.contains("\"type\":\"arrived\"") }
        #expect(arrived != nil, "a simulated member was greeted over TLS:\n\(scanner.transcript)\n\(coordinator.transcript)\n\(broker.log)")

        let capture = try #require(try Mesh.captures().first)
        let sightings = try await MosquittoClients.subscribe(
            port: broker.port, filter: "\(Self.tree)/stores/1/departments/20/#", qos: 1,
            extraArguments: try broker.login("monitor-1"))
        let replay = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "20", "--source", "btsnoop:\(capture.path)", "--speed", "max", "--broker", broker.url,
                "--cafile", broker.caFile, "--username", "node-1-20-a", "--password-file", broker.credentialFile(of: "node-1-20-a"),
            ])
        #expect(await replay.waitForExit(timeout: .seconds(30)) == .exited(0), "\(replay.transcript)")
        #expect(await sightings.waitForLine(timeout: .seconds(5)) { $0.contains("/sightings ") } != nil, "\(sightings.lines)")
        #expect(await sightings.waitForLine(timeout: .seconds(5)) { $0.contains("/status ") && $0.contains("\"offline\"") } != nil)

        #expect(await scanner.stop(with: SIGTERM, timeout: .seconds(10)) == .exited(0), "\(scanner.transcript)")
        #expect(await coordinator.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0), "\(coordinator.transcript)")
        await events.stop()
        await sightings.stop()
    }

    /// Tries `attempt` every 200 ms until it returns `true`; `false` after `timeout`.
    static func retrying(for timeout: Duration, _ attempt: () async -> Bool) async -> Bool {
        await eventually(timeout: timeout, interval: .milliseconds(200)) { await attempt() ? true : nil } ?? false
    }

    /// Points a coordinator config written by `Mesh.writeCoordinatorConfig` at `broker` with `user`'s credential.
    static func useCredentials(config: String, broker: ProfileBroker, user: String) throws {
        let text = try String(contentsOfFile: config, encoding: .utf8)
        let line = "broker: {url: \"\(broker.url)\"}"
        guard text.contains(line) else { throw TestSupportError("\(config) has no line \(line)") }
        let secured =
            "broker: {url: \"\(broker.url)\", username: \(user), passwordFile: \"\(broker.credentialFile(of: user))\", cafile: \"\(broker.caFile)\"}"
        try text.replacingOccurrences(of: line, with: secured).write(toFile: config, atomically: true, encoding: .utf8)
    }
}
