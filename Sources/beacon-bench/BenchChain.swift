import Foundation

/// The chain the coordinator and ranging benchmarks drain a backlog through: 100 stores of 10 departments, the
/// coordinator built next to `beacon-bench` (id `bench`, health every 200 ms), and a `mosquitto_sub` beside it.
struct BenchChain {
    let work: String
    let port: Int

    static let stores = 100

    /// Writes `members.csv` (the header is added, with the `eid` column when `secretsKeyFile` is given; none if
    /// `rows` is nil: the members are in the registry already) and the coordinator's config, on `database` (a file in
    /// the work folder or a PostgreSQL URL), into the work folder.
    func writeConfig(members rows: String?, database: String = "bench.sqlite", secretsKeyFile: String? = nil) throws {
        if let rows {
            try ("id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\(secretsKeyFile == nil ? "" : ",eid")\n" + rows)
                .write(toFile: work + "/members.csv", atomically: true, encoding: .utf8)
        }
        let departments = (0..<10).map { "          - {id: \($0), name: Department \($0)}" }.joined(separator: "\n")
        let stores = (1...Self.stores).map { "  - id: \($0)\n    name: Store \($0)\n    departments:\n\(departments)" }
            .joined(separator: "\n")
        try """
        id: bench
        broker: {url: "mqtt://127.0.0.1:\(port)"}
        database: "\(database)"
        \(rows == nil ? "" : "members: members.csv")
        \(secretsKeyFile.map { "secretsKeyFile: \($0)" } ?? "")
        presence: {staleAfter: 5s, exitAfter: 60s, switchMargin: 4, switchDwell: 0s, visitGap: 20m}
        stores:
        \(stores)
        """.write(toFile: work + "/coordinator.yaml", atomically: true, encoding: .utf8)
    }

    var coordinatorPath: String { Self.coordinatorPathBesideBench }

    /// The `beacon-coordinator` built next to `beacon-bench`.
    static var coordinatorPathBesideBench: String { BenchProcess.besideBench("beacon-coordinator") }

    var coordinatorArguments: [String] {
        ["run", "--config", work + "/coordinator.yaml", "--health-interval", "200ms", "--log-level", "warning"]
    }

    /// `mosquitto_sub` on `topic` in the persistent session `bench-drain`.
    func subscriberArguments(topic: String) -> [String] {
        ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-c", "-i", "bench-drain", "-t", topic]
    }

    /// Both consumers make their persistent sessions, then go away, so that the broker queues the backlog for both.
    func makeSessions(drainTopic: String) async throws {
        let coordinator = try BenchProcess(coordinatorPath, coordinatorArguments)
        let subscriber = try BenchProcess(BenchProcess.which("mosquitto_sub"), subscriberArguments(topic: drainTopic) + ["-W", "2"])
        try await Task.sleep(for: .seconds(2.5))
        coordinator.stop()
        subscriber.stop()
    }
}
