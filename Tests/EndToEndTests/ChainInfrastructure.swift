import BeaconMeshTesting
import Foundation
import Testing

/// What a chain's end-to-end tests run on: a PostgreSQL server of the test's own with a fresh database, one
/// mosquitto, a relay in front of PostgreSQL the test may cut, a folder with `members.csv`, and a subscription to
/// `filters` recording what the broker carries, in order.
struct ChainInfrastructure {
    let server: PostgresServer
    let url: String
    let broker: MosquittoBroker
    let relay: TCPRelay
    let directory: String
    let watch: Subscription

    static func start(members: String, filters: [String]) async throws -> ChainInfrastructure {
        let server = try PostgresServer.start()
        let url = try server.createDatabase()
        let broker = try await MosquittoBroker.start()
        let relay = try TCPRelay(to: server.port)
        let directory = try Mesh.temporaryDirectory()
        try members.write(toFile: directory + "/members.csv", atomically: true, encoding: .utf8)
        let watch = try await MosquittoClients.subscribe(port: broker.port, filters: filters, qos: 1)
        return ChainInfrastructure(server: server, url: url, broker: broker, relay: relay, directory: directory, watch: watch)
    }

    /// The database's URL through the relay.
    var relayURL: String { url.replacingOccurrences(of: ":\(server.port)/", with: ":\(relay.port)/") }

    /// Writes `config` as `{name}.yaml` in the folder, runs a coordinator on it and waits until it runs.
    func startCoordinator(name: String, config: String) async throws -> TestProcess {
        let path = directory + "/\(name).yaml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", path, "--health-interval", "1s"])
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(20)) { $0.contains("coordinator running") }
        try #require(running != nil, "\(coordinator.transcript)")
        return coordinator
    }

    /// The member's visit count in the registry, read with `psql`.
    func visits(of member: String) throws -> Int? {
        let database = String(url.split(separator: "/").last ?? "")
        return Int(
            try server.psql("SELECT visits FROM member WHERE id = '\(member)'", database: database).trimmingCharacters(
                in: .whitespacesAndNewlines))
    }

    /// Waits for a health report of coordinator `id`, published from now on, saying nothing waits to be written
    /// (`"database":{"state":"ok","queued":0`): every write it had, a retry after an outage included, is done, so a
    /// count read after it stays as it is until something new is decided.
    func writesSettled(of id: String, timeout: Duration = .seconds(15)) async throws -> Bool {
        let health = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/coordinators/\(id)/health")
        let settled = await health.waitForLine(timeout: timeout) { $0.contains(#""database":{"state":"ok","queued":0,"#) }
        await health.stop()
        if settled == nil { Issue.record("\(id)'s writes never settled; its last health: \(health.lines.last ?? "none")") }
        return settled != nil
    }

    /// Guests in department 10 of `store` by the presence snapshot on `line`; `nil` for any other line.
    static func guests(store: Int, on line: String) -> Int? {
        guard Mesh.topic(of: line) == "beaconmesh/v1/stores/\(store)/presence" else { return nil }
        let occupancy = Mesh.payload(of: line)?["occupancy"] as? [String: Any]
        return (occupancy?["10"] as? [String: Any])?["guests"] as? Int ?? 0
    }

    /// Waits until, after `watch.lines[mark]`, a presence snapshot of `store` counted a guest and a later one none (`watch`
    /// must carry `stores/+/presence`): the coordinator decided on the guest's readings and saw them end. Anything it
    /// decided for that beacon meanwhile (a greeting, had it taken the guest for a member) was published before, on
    /// the same subscription, so it is in `watch` by then.
    func guestCameAndWent(store: Int, after mark: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await eventually(timeout: timeout, interval: .milliseconds(50)) {
            let counts = watch.lines.dropFirst(mark).compactMap { Self.guests(store: store, on: $0) }
            guard let came = counts.firstIndex(where: { $0 >= 1 }) else { return false }
            return counts[came...].contains(0)
        }
    }

    /// Stops `coordinators` (SIGTERM), then the subscription, the broker, the relay and the server.
    func stop(_ coordinators: [TestProcess]) async {
        for coordinator in coordinators { _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10)) }
        await watch.stop()
        await broker.stop()
        relay.stop()
        server.stop()
    }

    /// `beacon-coordinator members …` on the registry at `url`, expected to succeed; its process, ended.
    @discardableResult
    static func members(_ arguments: [String], _ url: String) async throws -> TestProcess {
        let command = try Mesh.program("beacon-coordinator", ["members"] + arguments + ["--db", url])
        #expect(await command.waitForExit(timeout: .seconds(60)) == .exited(0), "\(command.transcript)")
        return command
    }

    /// The config of coordinator `store-1` on this chain's registry: it merges `members.csv` and decides store 1 with
    /// short timings; `top` lines go at the top level, `store` lines under store 1 (its departments among them).
    func storeOneConfig(top: [String] = [], store: [String]) -> String {
        let head = [
            "id: store-1", "broker: {url: \"\(broker.url)\"}", "database: \"\(url)\"", "members: members.csv",
            "presence: {staleAfter: 3s, exitAfter: 2s, switchMargin: 4, switchDwell: 1s, visitGap: 20m}",
        ]
        return (head + top + ["stores:", "  - id: 1", "    name: Store 1"] + store.map { "    " + $0 }).joined(separator: "\n")
    }

    /// The events of `type` the watch has seen so far, as payloads.
    func events(_ type: String) -> [[String: Any]] {
        watch.lines.compactMap(Mesh.payload(of:)).filter { $0["type"] as? String == type }
    }
}
