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

    /// Stops `coordinators` (SIGTERM), then the subscription, the broker, the relay and the server.
    func stop(_ coordinators: [TestProcess]) async {
        for coordinator in coordinators { _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10)) }
        await watch.stop()
        await broker.stop()
        relay.stop()
        server.stop()
    }
}
