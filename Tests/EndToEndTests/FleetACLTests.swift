import BeaconMeshTesting
import Foundation
import Testing

/// The production broker profile with provisioned credentials: only the fleet credential publishes node configs,
/// a node reads only its store's and its own, and `nodes set` over TLS reaches a node running on its own credential.
@Suite("fleet credential: the production profile with a real mosquitto", .serialized)
struct FleetACLTests {
    static let tree = "beaconmesh/v1"

    @Test(
        "only fleet-hq publishes node configs; node-1-10-a reads its store's and its own, not store 2's nor another node's; nodes set over TLS is applied by a node on its own credential"
    )
    func onlyTheFleetWritesNodeConfigs() async throws {
        let broker = try await ProfileBroker()
        for arguments in [
            ["node", "--store", "1", "--department", "10", "--node", "a"], ["node", "--store", "1", "--department", "20", "--node", "a"],
            ["monitor", "--store", "1"], ["coordinator", "--id", "e2e", "--store", "1"], ["dashboard"], ["fleet", "--name", "hq"],
        ] {
            try await broker.provision(arguments)
        }
        try await broker.start()
        let storeConfig = "\(Self.tree)/stores/1/nodes/config"
        let ownConfig = "\(Self.tree)/stores/1/departments/10/nodes/a/config"
        let others = ["\(Self.tree)/stores/2/nodes/config", "\(Self.tree)/stores/1/departments/20/nodes/a/config"]
        // What node-1-10-a may read, and a control subscriber that sees everything of store 1 and 2.
        let asNode = try await MosquittoClients.subscribe(
            port: broker.port, filters: [storeConfig, ownConfig] + others, qos: 1, extraArguments: try broker.login("node-1-10-a"))
        let control = try await MosquittoClients.subscribe(
            port: broker.port, filters: ["\(Self.tree)/stores/+/nodes/config", "\(Self.tree)/stores/+/departments/+/nodes/+/config"],
            qos: 1,
            extraArguments: try broker.login("fleet-hq"))
        for user in ["node-1-10-a", "monitor-1", "coordinator-e2e", "dashboard-hq"] {
            try await MosquittoClients.publish(
                port: broker.port, topic: storeConfig, string: "denied: \(user)", qos: 1, extraArguments: try broker.login(user))
        }
        for topic in [storeConfig, ownConfig] + others {
            try await MosquittoClients.publish(
                port: broker.port, topic: topic, string: "fleet: \(topic)", qos: 1, extraArguments: try broker.login("fleet-hq"))
        }
        #expect(await control.waitForLine { $0.hasSuffix("fleet: \(others[1])") } != nil, "\(control.lines)\n\(broker.log)")
        #expect(await asNode.waitForLine { $0.hasSuffix("fleet: \(ownConfig)") } != nil, "\(asNode.lines)")
        await asNode.stop()
        await control.stop()
        #expect(!control.lines.contains { $0.contains("denied") }, "another credential wrote a node config: \(control.lines)")
        #expect(asNode.lines == ["\(storeConfig) fleet: \(storeConfig)", "\(ownConfig) fleet: \(ownConfig)"], "\(asNode.lines)")

        // The real programs on their own credentials: nodes set (fleet-hq) reaches the scanner (node-1-10-a).
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "10", "--source", "sim", "--broker", broker.url, "--cafile", broker.caFile,
                "--username", "node-1-10-a", "--password-file", broker.credentialFile(of: "node-1-10-a"),
            ])
        defer { scanner.send(SIGKILL) }
        let fleet = [
            "--broker", broker.url, "--cafile", broker.caFile, "--username", "fleet-hq", "--password-file",
            broker.credentialFile(of: "fleet-hq"),
        ]
        // The raw "fleet: …" payloads above are retained and unreadable: the scanner refuses them; nodes set then
        // writes revision 1 over them.
        let online = await Self.listsANodeOnline(store: 1, within: .seconds(20), fleet)
        #expect(online, "\(scanner.transcript)\n\(broker.log)")
        let set = try Mesh.program("beacon-coordinator", ["nodes", "set", "--store", "1", "rssiAdjustment=2"] + fleet)
        #expect(await set.waitForExit(timeout: .seconds(30)) == .exited(0), "\(set.transcript)\n\(scanner.transcript)")
        #expect(set.stdoutLines.contains("1/10/a applied revision 1"), "\(set.transcript)")
        // The node's own credential cannot change its store's config.
        let asNodeSet = try Mesh.program(
            "beacon-coordinator",
            [
                "nodes", "set", "--store", "1", "rssiAdjustment=9", "--broker", broker.url, "--cafile", broker.caFile, "--username",
                "node-1-10-a", "--password-file", broker.credentialFile(of: "node-1-10-a"),
            ])
        _ = await asNodeSet.waitForExit(timeout: .seconds(30))
        let retained = try await MosquittoClients.subscribe(
            port: broker.port, filter: storeConfig, qos: 1, extraArguments: try broker.login("fleet-hq"))
        let kept = await retained.waitForLine { $0.hasPrefix(storeConfig) }
        await retained.stop()
        #expect(kept?.contains(#""revision":1,"#) == true && kept?.contains(#""rssiAdjustment":2"#) == true, "\(kept ?? "none")")
        #expect(await scanner.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0), "\(scanner.transcript)")
    }

    /// Whether `beacon-coordinator nodes list --store N --json` with `arguments` (broker and credential) lists a node
    /// online within `timeout`, asked again until it does.
    static func listsANodeOnline(store: Int, within timeout: Duration, _ arguments: [String]) async -> Bool {
        await BrokerSecurityTests.retrying(for: timeout) {
            guard let list = try? Mesh.program("beacon-coordinator", ["nodes", "list", "--store", "\(store)", "--json"] + arguments)
            else { return false }
            _ = await list.waitForExit(timeout: .seconds(20))
            return list.stdoutLines.joined().contains(#""state":"online""#)
        }
    }
}
