import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshTesting
import BeaconMeshWire
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Coordinators standing in for each other: a chain's stores served by several `beacon-coordinator` processes on one
/// PostgreSQL registry (a server of the benchmark's own) and one mosquitto. The stores are spread as a chain would
/// spread them: in groups (store mod coordinators), coordinator k listing groups k and k + 1, so that each store has a
/// coordinator and a standby, and each coordinator stands by for its neighbour's stores; started in order, the first
/// holds two groups, the second one, and the others take stores over only when a holder dies.
/// Members walk all along — in each store one who stays the whole run and one who comes for 8 s every `cycle` —
/// while the coordinator holding the most stores is killed with SIGKILL (and restarted 5 s later, as systemd's
/// `RestartSec` would), then, once every store is held again, the next one.
///
/// Reported: each store's take-over time (from the kill to the status in which its new holder decides for it), p50
/// and max per kill; the `arrived` and `left` events lost and doubled against the walks (each visit must give one
/// of each); event ids seen twice; and registry visit counts that differ from the visits announced.
struct FailoverBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "failover",
        abstract: "Leases: take-over time per store after coordinators are killed, events lost and doubled (PostgreSQL).")

    @Option(help: "Stores of the chain.")
    var stores: Int = 100

    @Option(help: "Coordinators, each listing two groups of stores (a ring: each store has two).")
    var coordinators: Int = 3

    @Option(help: "The lease ttl, in seconds (the config's lease.ttl).")
    var ttl: Int = 5

    @Option(help: "Seconds between two visits of a store's coming-and-going member (present 8 s of them).")
    var cycle: Int = 20

    @Option(help: "How many cycles the members walk.")
    var cycles: Int = 4

    func validate() throws {
        guard (1...1000).contains(stores) else { throw ValidationError("--stores must be from 1 to 1000") }
        guard (2...10).contains(coordinators) else { throw ValidationError("--coordinators must be from 2 to 10") }
        guard (1...60).contains(ttl) else { throw ValidationError("--ttl must be from 1 to 60 seconds") }
        guard cycle >= 16 else { throw ValidationError("--cycle must be at least 16 seconds (8 present, 8 away)") }
        guard cycles >= 3 else { throw ValidationError("--cycles must be at least 3 (two kills need the time)") }
    }

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    /// One message the watcher received, with when.
    private struct Received: Sendable {
        let at: ContinuousClock.Instant
        let topic: String
        let payload: [UInt8]
    }

    private static let presence = 8

    private func measure(in work: String) async throws {
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        let server = try PostgresServer.start()
        defer { server.stop() }
        let url = try server.createDatabase()
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited)
        defer { broker.process.stop() }
        try writeFiles(in: work, database: url, brokerURL: broker.url)

        let topics = Topics()
        let watcher = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL(broker.url)), logger: logger)
        try watcher.start()
        try watcher.subscribe(topics.eventsFilter(store: nil), qos: .atLeastOnce)
        try watcher.subscribe(topics.coordinatorStatusFilter(id: nil), qos: .atLeastOnce)
        let received = Mutex<[Received]>([])
        let watching = Task {
            for await message in watcher.messages {
                received.withLock { $0.append(Received(at: .now, topic: message.topic, payload: message.payload)) }
            }
        }
        let publisher = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL(broker.url)), logger: logger)
        try publisher.start()
        _ = await publisher.waitUntilConnected(timeout: .seconds(10))

        // In order: each takes the stores of its groups nobody holds yet.
        var running: [Int: BenchProcess] = [:]
        for index in 0..<coordinators {
            running[index] = try startCoordinator(index, in: work)
            let listed = Set(listedStores(of: index).map { UInt16($0) })
            try await waitUntil(timeout: .seconds(60)) { listed.isSubset(of: holders(received.withLock { $0 }).keys) }
        }
        let start = holders(received.withLock { $0 })
        print(
            "held at start: "
                + (0..<coordinators).map { index in "failover-\(index) \(start.values.filter { $0 == "failover-\(index)" }.count)" }
                .joined(separator: ", "))
        try await Task.sleep(for: .seconds(Double(ttl) + 3))

        // The members walk; two kills on the way.
        let walkStart = ContinuousClock.now
        let walkLength = Duration.seconds(cycle * cycles)
        let walking = Task { try await walk(from: walkStart, for: walkLength, with: publisher, topics: topics) }
        var kills: [(victim: Int, at: ContinuousClock.Instant, stores: Set<UInt16>)] = []
        for round in 1...2 {
            try await Task.sleep(until: walkStart + .seconds(cycle * cycles * round / 3), clock: .continuous)
            let now = holders(received.withLock { $0 })
            let counts = Dictionary(grouping: now.values, by: { $0 }).mapValues(\.count)
            guard let victimID = counts.max(by: { ($0.value, $1.key) < ($1.value, $0.key) })?.key,
                let victim = Int(victimID.dropFirst("failover-".count)), let process = running[victim]
            else { throw BenchError("no coordinator holds a store before kill \(round)") }
            kill(process.processIdentifier, SIGKILL)
            let at = ContinuousClock.now
            process.stop()
            kills.append((victim, at, Set(now.filter { $0.value == victimID }.keys)))
            print("kill \(round): failover-\(victim), holding \(counts[victimID] ?? 0) stores")
            try await Task.sleep(for: .seconds(5))
            running[victim] = try startCoordinator(victim, in: work)
            try await waitUntil(timeout: .seconds(60)) { holders(received.withLock { $0 }).count == stores }
        }
        try await walking.value
        // Everyone has gone: wait for the last departures (exitAfter 3 s).
        try await Task.sleep(for: .seconds(8))
        for process in running.values { process.stop() }
        await watcher.disconnect()
        await publisher.disconnect()
        watching.cancel()

        let log = received.withLock { $0 }
        report(kills: kills, log: log, walkLength: walkLength)
        try reportRegistry(server: server, url: url, log: log)
    }

    /// Members `s{store}-a` (stays) and `s{store}-b` (comes and goes), one node per store, and one config per coordinator.
    private func writeFiles(in work: String, database: String, brokerURL: String) throws {
        var rows = ["id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt"]
        for store in 1...stores {
            for (member, minor) in [("a", 1), ("b", 2)] {
                rows.append("s\(store)-\(member),Member \(store)\(member),,ibeacon:\(BenchBeacons.uuidText):\(store):\(minor),,0,,")
            }
        }
        try (rows.joined(separator: "\n") + "\n").write(toFile: work + "/members.csv", atomically: true, encoding: .utf8)
        for index in 0..<coordinators {
            let list = listedStores(of: index).map { "  - {id: \($0), name: Store \($0), departments: [{id: 10, name: Floor}]}" }
                .joined(separator: "\n")
            try """
            id: failover-\(index)
            broker: {url: "\(brokerURL)"}
            database: "\(database)"
            members: members.csv
            lease: {ttl: \(ttl)s}
            presence: {staleAfter: 3s, exitAfter: 3s, switchMargin: 4, switchDwell: 1s, visitGap: 5s}
            stores:
            \(list)
            """.write(toFile: work + "/failover-\(index).yaml", atomically: true, encoding: .utf8)
        }
    }

    /// The stores coordinator `index` lists: those of group `index` and of the next group (store mod coordinators).
    private func listedStores(of index: Int) -> [Int] {
        (1...stores).filter { [index, (index + 1) % coordinators].contains($0 % coordinators) }
    }

    private func startCoordinator(_ index: Int, in work: String) throws -> BenchProcess {
        try BenchProcess(
            BenchChain.coordinatorPathBesideBench,
            ["run", "--config", work + "/failover-\(index).yaml", "--log-level", "error", "--health-interval", "5s"])
    }

    /// Whether member `b` of `store` is present at `elapsed` into the walk: for 8 s from its store's offset in each cycle.
    private func comingAndGoingPresent(store: Int, at elapsed: Duration) -> Bool {
        let offset = store % (cycle - Self.presence)
        let second = Int(elapsed.components.seconds)
        return (second - offset) % cycle < Self.presence && second >= offset
    }

    /// Every 500 ms each store's node reports its present members.
    private func walk(
        from start: ContinuousClock.Instant, for length: Duration, with publisher: MQTTClient, topics: Topics
    ) async throws {
        var seq = 0
        while ContinuousClock.now - start < length {
            seq += 1
            let elapsed = ContinuousClock.now - start
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for store in 1...stores {
                var minors = [1]
                if comingAndGoingPresent(store: store, at: elapsed) { minors.append(2) }
                let sightings = minors.map { minor in
                    """
                    {"beacon":"ibeacon:\(BenchBeacons.uuidText):\(store):\(minor)","rssi":-60,"count":4,"txPower":-59,\
                    "distance":1.1,"proximity":"near","lastSeen":\(now)}
                    """
                }.joined(separator: ",")
                let payload = """
                    {"v":1,"store":\(store),"department":10,"node":"a","boot":"walk","seq":\(seq),"sentAt":\(now),\
                    "sightings":[\(sightings)]}
                    """
                let node = NodeAddress(store: UInt16(store), department: 10, node: "a")!
                try publisher.publish(topic: topics.sightings(node), payload: Array(payload.utf8), qos: .atLeastOnce, retain: false)
            }
            try await Task.sleep(until: start + .milliseconds(500 * (seq)), clock: .continuous)
        }
    }

    /// Which online coordinator decides for which store, by their latest statuses in `log`.
    private func holders(_ log: [Received]) -> [UInt16: String] {
        var latest: [String: CoordinatorStatus] = [:]
        for message in log {
            guard case .coordinatorStatus(let id)? = Topics().parse(message.topic),
                let status = try? WireCodec.decodeCoordinatorStatus(message.payload)
            else { continue }
            latest[id] = status
        }
        var held: [UInt16: String] = [:]
        for (id, status) in latest where status.state == .online {
            for store in status.active { held[store] = id }
        }
        return held
    }

    private func waitUntil(timeout: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw BenchError("the stores were not all held again within \(timeout)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func report(
        kills: [(victim: Int, at: ContinuousClock.Instant, stores: Set<UInt16>)], log: [Received], walkLength: Duration
    ) {
        for (round, kill) in kills.enumerated() {
            var times: [Double] = []
            for store in kill.stores {
                let taken = log.first { message in
                    guard message.at > kill.at, case .coordinatorStatus(let id)? = Topics().parse(message.topic),
                        id != "failover-\(kill.victim)", let status = try? WireCodec.decodeCoordinatorStatus(message.payload)
                    else { return false }
                    return status.state == .online && status.active.contains(store)
                }
                times.append(taken.map { Self.seconds(kill.at.duration(to: $0.at)) } ?? .infinity)
            }
            times.sort()
            let p50 = times.isEmpty ? 0 : times[times.count / 2]
            let max = times.last ?? 0
            print(
                "kill \(round + 1) (failover-\(kill.victim)): \(times.count) stores taken over; take-over p50 \(Self.format(p50)) s, "
                    + "max \(Self.format(max)) s (target ≤ ttl + 2 s = \(ttl + 2) s)")
        }
        // Visits: member a of each store one visit; member b one per presence window.
        var expected: [String: Int] = [:]
        for store in 1...stores {
            expected["s\(store)-a"] = 1
            var windows = 0
            var second = 0
            while second < Int(walkLength.components.seconds) {
                if comingAndGoingPresent(store: store, at: .seconds(second))
                    && !comingAndGoingPresent(store: store, at: .seconds(second - 1))
                {
                    windows += 1
                }
                second += 1
            }
            expected["s\(store)-b"] = windows
        }
        var arrived: [String: Int] = [:]
        var left: [String: Int] = [:]
        var ids: [String: Int] = [:]
        for message in log {
            guard case .events? = Topics().parse(message.topic), let event = try? WireCodec.decodeEvent(message.payload) else { continue }
            ids[event.id, default: 0] += 1
            guard let member = event.member?.id else { continue }
            if event.type == "arrived" { arrived[member, default: 0] += 1 }
            if event.type == "left" { left[member, default: 0] += 1 }
        }
        var lost = 0
        var doubled = 0
        for (member, visits) in expected {
            for observed in [arrived[member] ?? 0, left[member] ?? 0] {
                lost += Swift.max(0, visits - observed)
                doubled += Swift.max(0, observed - visits)
            }
        }
        let repeated = ids.values.filter { $0 > 1 }.count
        print(
            "events: \(expected.values.reduce(0, +)) visits walked, \(arrived.values.reduce(0, +)) arrived and "
                + "\(left.values.reduce(0, +)) left published; lost \(lost), doubled \(doubled), event ids seen twice \(repeated)")
    }

    private func reportRegistry(server: PostgresServer, url: String, log: [Received]) throws {
        var arrived: [String: Int] = [:]
        for message in log {
            guard case .events? = Topics().parse(message.topic), let event = try? WireCodec.decodeEvent(message.payload),
                event.type == "arrived", let member = event.member?.id
            else { continue }
            arrived[member, default: 0] += 1
        }
        let database = String(url.split(separator: "/").last ?? "")
        let rows = try server.psql("SELECT id || ' ' || visits FROM member", database: database)
        var differing = 0
        for row in rows.split(separator: "\n") {
            let parts = row.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard parts.count == 2, let visits = Int(parts[1]) else { continue }
            if visits != arrived[String(parts[0])] ?? 0 { differing += 1 }
        }
        print("registry: \(differing) members whose visit count differs from the arrivals announced")
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func format(_ value: Double) -> String {
        value.isFinite ? String(format: "%.2f", value) : "never"
    }
}
