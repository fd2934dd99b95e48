import BeaconMeshTesting
import Foundation
import Testing

/// A store broker and a head-office broker, both on the production profile, joined by deploy/bridge/store-bridge.conf.
private struct Chain {
    let hq: ProfileBroker
    let store: ProfileBroker

    static let tree = "beaconmesh/v1"

    /// HQ first (it makes the chain's CA), then the store with a certificate from the same CA and the bridge fragment.
    static func start() async throws -> Chain {
        let hq = try await ProfileBroker()
        try await hq.provision(["bridge", "--store", "1"])
        try await hq.provision(["monitor", "--store", "1"])
        try await hq.provision(["monitor", "--store", "2"])
        try await hq.provision(["coordinator", "--id", "hq"])
        try await hq.provision(["fleet", "--name", "hq"])
        let store = try await ProfileBroker(caFrom: hq.tls)
        try await store.provision(["coordinator", "--id", "backoffice", "--store", "1"])
        try await store.provision(["node", "--store", "1", "--department", "10", "--node", "a"])
        try await store.provision(["member", "ana"])
        try writeBridge(into: store, towards: hq)
        try await hq.start()
        try await store.start()
        return Chain(hq: hq, store: store)
    }

    /// The shipped bridge fragment with HQ's loopback address, the store's CA path and the provisioned password.
    static func writeBridge(into store: ProfileBroker, towards hq: ProfileBroker) throws {
        let template = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("deploy/bridge/store-bridge.conf"),
            encoding: .utf8)
        var replaced: Set<String> = []
        let lines = template.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let line = String(line)
            if line.hasPrefix("address ") {
                replaced.insert("address")
                return "address 127.0.0.1:\(hq.port)"
            }
            if line.hasPrefix("remote_password ") {
                replaced.insert("password")
                return "remote_password \((try? hq.password(of: "bridge-store-1")) ?? "")"
            }
            if line.hasPrefix("bridge_cafile ") {
                replaced.insert("cafile")
                return "bridge_cafile \(store.caFile)"
            }
            return line
        }
        guard replaced.count == 3 else {
            throw TestSupportError("deploy/bridge/store-bridge.conf lacks an address, remote_password or bridge_cafile line")
        }
        try lines.joined(separator: "\n").write(
            toFile: store.includeDirectory + "/beaconmesh-bridge.conf", atomically: true, encoding: .utf8)
    }

    /// Publishes a store event at the store broker as the store's coordinator (QoS 1).
    func publishEvent(_ text: String) async throws {
        try await MosquittoClients.publish(
            port: store.port, topic: "\(Self.tree)/stores/1/events", string: text, qos: 1,
            extraArguments: try store.login("coordinator-backoffice"))
    }

    /// A durable subscriber at HQ (client id `hq-watch`, clean session off): what arrives while it is away is kept for it.
    func watchHQ() async throws -> Subscription {
        try await MosquittoClients.subscribe(
            port: hq.port, filter: "\(Self.tree)/stores/1/events", qos: 1,
            extraArguments: ["-c", "-i", "hq-watch"] + (try hq.login("monitor-1")), timeout: .seconds(15))
    }
}

@Suite("a chain: a store broker bridged to head office", .serialized)
struct BridgeTests {
    @Test(
        "a store's events and members' ranging reach HQ and members' offers and check-ins come back, across restarts of HQ and of the store broker"
    )
    func eventsSurviveRestarts() async throws {
        let chain = try await Chain.start()
        var watcher = try await chain.watchHQ()
        try await chain.publishEvent("event 1: both up")
        #expect(
            await watcher.waitForLine(timeout: .seconds(20)) { $0.hasSuffix("event 1: both up") } != nil,
            "store log:\n\(chain.store.log)\nHQ log:\n\(chain.hq.log)")

        // Offers published at HQ (by a chain-wide coordinator) come back to the member's app at the store.
        let ana = try await MosquittoClients.subscribe(
            port: chain.store.port, filter: "\(Chain.tree)/members/ana/offers", qos: 1,
            extraArguments: try chain.store.login("ana"))
        try await MosquittoClients.publish(
            port: chain.hq.port, topic: "\(Chain.tree)/members/ana/offers", string: "offer from HQ",
            qos: 1, extraArguments: try chain.hq.login("coordinator-hq"))
        #expect(await ana.waitForLine(timeout: .seconds(10)) { $0.hasSuffix("offer from HQ") } != nil, "\(chain.store.log)")
        await ana.stop()

        // So do check-ins made at HQ; and the member's phone's ranging at the store reaches HQ's coordinator.
        let anasCheckins = try await MosquittoClients.subscribe(
            port: chain.store.port, filter: "\(Chain.tree)/members/ana/checkins", qos: 1,
            extraArguments: try chain.store.login("ana"))
        let hqRanging = try await MosquittoClients.subscribe(
            port: chain.hq.port, filter: "\(Chain.tree)/stores/+/members/+/ranging", qos: 1,
            extraArguments: try chain.hq.login("coordinator-hq"))
        try await MosquittoClients.publish(
            port: chain.hq.port, topic: "\(Chain.tree)/members/ana/checkins", string: "check-in from HQ",
            qos: 1, extraArguments: try chain.hq.login("coordinator-hq"))
        try await MosquittoClients.publish(
            port: chain.store.port, topic: "\(Chain.tree)/stores/1/members/ana/ranging", string: "ana ranging",
            qos: 1, extraArguments: try chain.store.login("ana"))
        #expect(await anasCheckins.waitForLine(timeout: .seconds(10)) { $0.hasSuffix("check-in from HQ") } != nil, "\(chain.store.log)")
        #expect(await hqRanging.waitForLine(timeout: .seconds(10)) { $0.hasSuffix("ana ranging") } != nil, "\(chain.hq.log)")
        await anasCheckins.stop()
        await hqRanging.stop()

        // HQ restarts while the store keeps publishing: the store queues, HQ's persistent session keeps the watcher's.
        await watcher.stop()
        await chain.hq.stop()
        try await chain.publishEvent("event 2: while HQ was down")
        try await chain.hq.start()
        watcher = try await chain.watchHQ()
        #expect(
            await watcher.waitForLine(timeout: .seconds(40)) { $0.hasSuffix("event 2: while HQ was down") } != nil,
            "store log:\n\(chain.store.log)\nHQ log:\n\(chain.hq.log)")

        // HQ down again, an event queued at the store, then the store broker restarts too: its database keeps the queue.
        await watcher.stop()
        await chain.hq.stop()
        try await chain.publishEvent("event 3: queued across a store broker restart")
        try await chain.store.restart()
        try await chain.hq.start()
        watcher = try await chain.watchHQ()
        #expect(
            await watcher.waitForLine(timeout: .seconds(40)) { $0.hasSuffix("event 3: queued across a store broker restart") } != nil,
            "store log:\n\(chain.store.log)\nHQ log:\n\(chain.hq.log)")

        // And the link carries new traffic after all that.
        try await chain.publishEvent("event 4: after the restarts")
        #expect(await watcher.waitForLine(timeout: .seconds(20)) { $0.hasSuffix("event 4: after the restarts") } != nil)
        await watcher.stop()
        let events = watcher.lines.filter { $0.contains("event ") }
        #expect(
            events.filter { $0.contains("event 1") }.isEmpty,
            "an event already delivered to this durable session is not delivered again: \(events)")
        await chain.store.stop()
        await chain.hq.stop()
    }

    @Test(
        "nodes set at HQ (the fleet credential) reaches a node at the store through the bridge and hears it applied; the config is not sent back up, and the bridge credential cannot write one at HQ"
    )
    func nodeConfigsComeDown() async throws {
        let chain = try await Chain.start()
        let storeConfig = "\(Chain.tree)/stores/1/nodes/config"
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "10", "--source", "sim", "--broker", chain.store.url, "--cafile",
                chain.store.caFile, "--username", "node-1-10-a", "--password-file", chain.store.credentialFile(of: "node-1-10-a"),
            ])
        defer { scanner.send(SIGKILL) }
        let fleet = [
            "--broker", chain.hq.url, "--cafile", chain.hq.caFile, "--username", "fleet-hq", "--password-file",
            chain.hq.credentialFile(of: "fleet-hq"),
        ]
        // The node's status goes up the bridge: head office lists it online.
        let online = await FleetACLTests.listsANodeOnline(store: 1, within: .seconds(30), fleet)
        #expect(online, "\(scanner.transcript)\nstore log:\n\(chain.store.log)\nHQ log:\n\(chain.hq.log)")
        // HQ's view of the config, and of a node status the bridge may write (a barrier below: one subscriber, so in order).
        let barrierTopic = "\(Chain.tree)/stores/1/departments/99/nodes/barrier/status"
        let atHQ = try await MosquittoClients.subscribe(
            port: chain.hq.port, filters: [storeConfig, barrierTopic], qos: 1, extraArguments: try chain.hq.login("fleet-hq"))
        let set = try Mesh.program("beacon-coordinator", ["nodes", "set", "--store", "1", "rssiAdjustment=2"] + fleet)
        #expect(await set.waitForExit(timeout: .seconds(30)) == .exited(0), "\(set.transcript)\n\(scanner.transcript)\n\(chain.store.log)")
        #expect(set.stdoutLines.contains("1/10/a applied revision 1"), "\(set.transcript)")
        // The store's broker keeps it retained for the store's nodes (a node that starts later reads it there).
        let atStore = try await MosquittoClients.subscribe(
            port: chain.store.port, filter: storeConfig, qos: 1, extraArguments: try chain.store.login("node-1-10-a"))
        let kept = await atStore.waitForLine(timeout: .seconds(10)) { $0.hasPrefix(storeConfig) }
        await atStore.stop()
        #expect(kept?.contains(#""revision":1,"#) == true && kept?.contains(#""rssiAdjustment":2"#) == true, "\(kept ?? "none")")
        // Whoever holds the store's bridge password cannot write a node config at HQ; what HQ holds is nodes set's,
        // published once (the bridge did not send it back up).
        try await MosquittoClients.publish(
            port: chain.hq.port, topic: storeConfig, string: "denied: the bridge", qos: 1, retain: true,
            extraArguments: try chain.hq.login("bridge-store-1"))
        try await MosquittoClients.publish(
            port: chain.hq.port, topic: barrierTopic, string: "barrier", qos: 1, extraArguments: try chain.hq.login("bridge-store-1"))
        _ = await atHQ.waitForLine(timeout: .seconds(10)) { $0.hasSuffix("barrier") }
        await atHQ.stop()
        let configs = atHQ.lines.filter { $0.hasPrefix(storeConfig) }
        #expect(configs.count == 1 && configs.first?.contains(#""revision":1,"#) == true, "\(atHQ.lines)")
        #expect(await scanner.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0), "\(scanner.transcript)")
        await chain.store.stop()
        await chain.hq.stop()
    }

    @Test("at HQ, a store's bridge credential cannot write another store's tree")
    func bridgeStaysInItsStore() async throws {
        let chain = try await Chain.start()
        let store1 = try await MosquittoClients.subscribe(
            port: chain.hq.port, filter: "\(Chain.tree)/stores/1/#", qos: 1,
            extraArguments: try chain.hq.login("monitor-1"))
        let store2 = try await MosquittoClients.subscribe(
            port: chain.hq.port, filter: "\(Chain.tree)/stores/2/#", qos: 1,
            extraArguments: try chain.hq.login("monitor-2"))
        // Whoever holds store 1's bridge password (the store broker's config) tries to pass as store 2.
        try await MosquittoClients.publish(
            port: chain.hq.port, topic: "\(Chain.tree)/stores/2/events", string: "denied: store 2",
            qos: 1, extraArguments: try chain.hq.login("bridge-store-1"))
        try await MosquittoClients.publish(
            port: chain.hq.port, topic: "\(Chain.tree)/stores/1/events", string: "allowed: store 1",
            qos: 1, extraArguments: try chain.hq.login("bridge-store-1"))
        #expect(await store1.waitForLine(timeout: .seconds(10)) { $0.hasSuffix("allowed: store 1") } != nil, "\(chain.hq.log)")
        // Head office's coordinator writes store 2 last: store 2's watcher has whatever came before it.
        try await MosquittoClients.publish(
            port: chain.hq.port, topic: "\(Chain.tree)/stores/2/events", string: "barrier",
            qos: 1, extraArguments: try chain.hq.login("coordinator-hq"))
        #expect(await store2.waitForLine(timeout: .seconds(10)) { $0.hasSuffix("barrier") } != nil, "\(chain.hq.log)")
        await store1.stop()
        await store2.stop()
        #expect(store2.lines == ["\(Chain.tree)/stores/2/events barrier"], "\(store2.lines)")
        await chain.store.stop()
        await chain.hq.stop()
    }
}
