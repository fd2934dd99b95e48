import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshTesting
import Foundation
import Logging

/// A real coordinator's arrival latency while its registry is busy, on SQLite and on a PostgreSQL server of the
/// benchmark's own, side by side in one run: after a warm-up (the stream's members all arrive), first quiet, then while other stores' coordinators (a `RegistryWriter`
/// in the benchmark, the coordinator's own writer) count visits of the chain's members at `--chain-writes` per
/// second, each announced to the coordinator (PostgreSQL: LISTEN/NOTIFY, member by member; SQLite: the member change
/// log its triggers fill). On SQLite each phase also prints the size of the coordinator's write-ahead log at its end.
struct RegistryLoadBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registry-load",
        abstract: "Publish → arrived latency of a real coordinator while other stores write visits to its registry (SQLite and PostgreSQL)."
    )

    @Option(help: "Members of the chain in the registry besides the stream's 5,000 (the other stores' visits are theirs).")
    var members: Int = 100_000

    @Option(help: "The sighting stream's rate in batches/s (≈ 25 % of what the coordinator drains here).")
    var rate: Double = 10_000

    @Option(help: "Arrivals timed per phase.")
    var arrivals: Int = 300

    @Option(help: "One batch in this many brings a newcomer.")
    var probeEvery: Int = 50

    @Option(help: "Visit writes per second the other stores make during the busy phase.")
    var chainWrites: Int = 2_000

    @Flag(
        help:
            "The other stores write to another database on the same server (SQLite: another file): the coordinator hears none of it, the machine's cores are shared as before."
    )
    var writesElsewhere = false

    @Flag(help: "SQLite only (no PostgreSQL server is started).")
    var sqliteOnly = false

    func validate() throws {
        guard members >= 0, rate > 0, arrivals > 0, arrivals * 8 < 65_000, probeEvery > 0, chainWrites > 0 else {
            throw ValidationError("--members must be ≥ 0; --rate, --arrivals (below 8,100), --probe-every and --chain-writes above 0")
        }
    }

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    private func measure(in work: String) async throws {
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited)
        defer { broker.process.stop() }
        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        let postgres = sqliteOnly ? nil : try PostgresServer.start()
        defer { postgres?.stop() }
        var backends = [("SQLite", work + "/bench.sqlite")]
        if let postgres { backends.append(("PostgreSQL", try postgres.createDatabase())) }

        print(
            "registry-load: a real coordinator through mosquitto, 100 stores × 10 departments, \(Measure.grouped(Double(5_000 + members))) members in the registry; "
                + "stream \(Measure.grouped(rate)) batches/s, a newcomer in \(probeEvery), \(arrivals) arrivals per phase; \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        for (index, (name, database)) in backends.enumerated() {
            let location = try RegistryLocation(database)
            let importing = ContinuousClock.now
            try location.open().merge(records())
            let imported = ContinuousClock.now - importing
            let chain = BenchChain(work: work, port: broker.port)
            try chain.writeConfig(members: nil, database: database)
            let (health, observations, watcher) = try await CoordinatorBenchmark.watchCoordinator(port: broker.port, logger: logger)
            let coordinator = try BenchProcess(chain.coordinatorPath, chain.coordinatorArguments)
            let started = ContinuousClock.now
            while observations.timeBatchesReached(0) == nil && ContinuousClock.now - started < .seconds(60) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let ready = ContinuousClock.now - started

            // A warm-up stream first (not counted): the stream's 5,000 members all arrive in its first second.
            let base = index * 4 * arrivals
            _ = try await ArrivalLatencyStream(
                rate: rate, arrivals: arrivals, probeEvery: probeEvery, sightingsPerBatch: 10, firstNewcomer: base + 2 * arrivals,
                boot: "warm-\(index)"
            ).run(port: broker.port, observations: observations)
            // The writes of those arrivals, and on PostgreSQL the whole read its change feed makes when it starts
            // listening, are over before the measured phases.
            try await Task.sleep(for: .seconds(5))
            let quiet = try await ArrivalLatencyStream(
                rate: rate, arrivals: arrivals, probeEvery: probeEvery, sightingsPerBatch: 10, firstNewcomer: base, boot: "quiet-\(index)"
            ).run(port: broker.port, observations: observations)
            var loadLocation = location
            if writesElsewhere {
                let elsewhere = name == "PostgreSQL" ? try postgres?.createDatabase() : nil
                loadLocation = try RegistryLocation(elsewhere ?? work + "/elsewhere-\(index).sqlite")
                try loadLocation.open().merge(records())
            }
            let load = ChainWrites(location: loadLocation, perSecond: chainWrites, members: members, logger: logger)
            let busy = try await ArrivalLatencyStream(
                rate: rate, arrivals: arrivals, probeEvery: probeEvery, sightingsPerBatch: 10, firstNewcomer: base + arrivals,
                boot: "busy-\(index)"
            ).run(port: broker.port, observations: observations)
            let (written, waiting) = await load.stop()
            let logAfterBusy = Self.writeAheadLog(of: database)
            // The same writes, each visit with its history (three departments, an offer, a check-in), as a
            // coordinator writes it when a member leaves.
            let historyLoad = ChainWrites(
                location: loadLocation, perSecond: chainWrites, members: members, withHistory: true, logger: logger)
            let busyWithHistory = try await ArrivalLatencyStream(
                rate: rate, arrivals: arrivals, probeEvery: probeEvery, sightingsPerBatch: 10, firstNewcomer: base + 3 * arrivals,
                boot: "history-\(index)"
            ).run(port: broker.port, observations: observations)
            let (writtenWithHistory, waitingWithHistory) = await historyLoad.stop()
            let logAfterHistory = Self.writeAheadLog(of: database)
            coordinator.stop()
            watcher.cancel()
            await health.disconnect(timeout: .seconds(1))

            func figures(_ latencies: [Double]) -> String {
                "p50 \(ArrivalLatencyStream.percentile(latencies, 0.5)), p99 \(ArrivalLatencyStream.percentile(latencies, 0.99)), "
                    + "max \(ArrivalLatencyStream.percentile(latencies, 1)) (\(latencies.count) of \(arrivals) greeted)"
            }
            print(
                "  \(name): \(Measure.grouped(Double(5_000 + members))) members imported in \(Self.seconds(imported)) s; coordinator reporting \(Self.seconds(ready)) s after its start"
            )
            print("    quiet registry                                       \(figures(quiet))")
            print(
                "    other stores writing \(Measure.grouped(Double(chainWrites))) visits/s\(writesElsewhere ? " elsewhere" : "") (\(Measure.grouped(written))/s written, at most \(waiting) waiting)   \(figures(busy))\(logAfterBusy)"
            )
            print(
                "    … each visit with its history\(writesElsewhere ? " elsewhere" : "") (\(Measure.grouped(writtenWithHistory))/s written, at most \(waitingWithHistory) waiting)   \(figures(busyWithHistory))\(logAfterHistory)"
            )
        }
    }

    private static func seconds(_ duration: Duration) -> String { String(format: "%.1f", duration.inSeconds) }

    /// `; write-ahead log N MB` for a SQLite file (the coordinator's readers can keep it from restarting), else "".
    private static func writeAheadLog(of database: String) -> String {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: database + "-wal"))?[.size] as? Int else { return "" }
        return String(format: "; write-ahead log %.1f MB", Double(size) / 1_000_000)
    }

    /// The stream's 5,000 members (major = store), the newcomers (major 1000) and the chain's other members.
    private func records() -> [MemberRecord] {
        let joined = Timestamp(milliseconds: 1_735_689_600_000)
        func record(_ id: String, _ major: UInt16, _ minor: UInt16) -> MemberRecord {
            MemberRecord(
                profile: MemberProfile(id: id, name: "Member \(id)", favoriteDrink: "Tea"),
                beacons: [.iBeacon(uuid: BenchBeacons.uuid, major: major, minor: minor)], createdAt: joined)
        }
        let stream = (1...5_000).map { record("m\($0)", UInt16(CoordinatorBenchmark.store(ofMember: $0)), UInt16($0)) }
        let newcomers = (0..<(8 * arrivals)).map { record("n\($0)", 1000, UInt16($0)) }
        let others = (0..<members).map { record("x\($0)", UInt16(2000 + $0 / 60_000), UInt16($0 % 60_000)) }
        return stream + newcomers + others
    }
}

/// Other stores' coordinators counting visits of the chain's members `x…` into the registry at a steady rate, through
/// the coordinator's own `RegistryWriter`, until stopped.
private final class ChainWrites: Sendable {
    private let writer: RegistryWriter
    /// Offers visits until cancelled; its value is how many it offered and the most that waited at once.
    private let offering: Task<(offered: Int, mostWaiting: Int), Never>
    private let started = ContinuousClock.now

    init(location: RegistryLocation, perSecond: Int, members: Int, withHistory: Bool = false, logger: Logger) {
        let registry: any MemberRegistry
        do { registry = try location.open() } catch { fatalError("\(error)") }
        let writer: RegistryWriter
        do {
            writer = try RegistryWriter(registry: registry, stores: [999], logger: logger, clock: { WallClock.now() })
        } catch { fatalError("\(error)") }
        self.writer = writer
        let started = started
        offering = Task.detached {
            var count = 0
            var mostWaiting = 0
            while !Task.isCancelled {
                let due = Int(Double(perSecond) * (ContinuousClock.now - started).inSeconds)
                var changes = RegistryChanges()
                while count < due {
                    let member = "x\(count % max(members, 1))"
                    let now = WallClock.now()
                    changes.countVisit(of: member, at: now)
                    if withHistory { changes.record(Self.history(of: member, store: UInt16(2000 + count % 100), leftAt: now)) }
                    count += 1
                }
                writer.enqueue(changes)
                mostWaiting = max(mostWaiting, writer.status.queued)
                try? await Task.sleep(for: .milliseconds(10))
            }
            return (count, mostWaiting)
        }
    }

    /// A finished visit of `member` that ended at `leftAt`: three departments of four minutes, an offer and a check-in.
    static func history(of member: String, store: UInt16, leftAt: Timestamp) -> VisitRecord {
        let arrivedAt = leftAt - .seconds(720)
        var record = VisitRecord(member: member, store: store, arrivedAt: arrivedAt, leftAt: leftAt, number: 2)
        for stop in 0..<3 {
            let department = UInt16(10 * (stop + 1))
            record.stops.append(
                .init(
                    department: department, name: "Department \(department)", enteredAt: arrivedAt + .seconds(240 * stop),
                    dwell: .seconds(240)))
        }
        record.offers.append(.init(promo: "promo-20", department: 20, at: arrivedAt + .seconds(250)))
        record.checkins.append(.init(department: 30, at: leftAt - .seconds(30)))
        return record
    }

    /// Stops offering, waits for the writer to write what waits; returns the visits written per second and the most
    /// that waited at once.
    func stop() async -> (perSecond: Double, mostWaiting: Int) {
        offering.cancel()
        let (offered, mostWaiting) = await offering.value
        await writer.close(timeout: .seconds(30))
        return (Double(offered) / (ContinuousClock.now - started).inSeconds, mostWaiting)
    }
}
