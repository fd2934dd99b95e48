import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshTesting
import BeaconMeshWire
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The coordinator service in this process, on an in-memory broker: the CPU it spends per sighting batch with no
/// network at all, next to json-c's decode of the same batches — what `beacon-bench coordinator` cannot separate from
/// the receive path, measured without the noise of three processes sharing the cores. The in-memory broker's own work
/// (matching each event's topic against every subscription) is part of the figure: a few µs per batch.
struct CoordinatorInMemoryBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator-in-memory",
        abstract: "Coordinator service on an in-memory broker: CPU per sighting batch beyond json-c's decode, no network.",
        discussion:
            "The chain, members and backlog of `beacon-bench coordinator` (100 stores, 5,000 members, batches of 10), queued in the coordinator's persistent session and drained by a CoordinatorService in this process."
    )

    @Option(help: "Sighting batches in the backlog.")
    var batches: Int = 100_000

    @Option(help: "Sightings per batch.")
    var sightingsPerBatch: Int = 10

    @Option(help: "Drains to run; the figures of each are printed, then the median.")
    var repeats: Int = 3

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    private func measure(in work: String) async throws {
        var configuration = CoordinatorConfiguration(id: "bench")
        // The presence block of `BenchChain`'s config.
        var rules = PresenceRules()
        (rules.staleAfter, rules.exitAfter, rules.switchMargin, rules.switchDwell) = (.seconds(5), .seconds(60), 4, .zero)
        configuration.stores = (1...BenchChain.stores).map { id in
            var store = CoordinatorConfiguration.Store(id: UInt16(id), name: "Store \(id)")
            store.departments = (0..<10).map { .init(id: UInt16($0), name: "Department \($0)", presence: rules) }
            return store
        }
        let payloads = CoordinatorBenchmark.backlog(batches: batches, sightingsPerBatch: sightingsPerBatch, boot: "bench")
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning

        var results: [(cpu: Double, decode: Double)] = []
        var rates: [Double] = []
        for round in 1...repeats {
            // A fresh registry and broker each round: the members are newcomers again.
            let registry = try SQLiteRegistry(path: work + "/registry-\(round).sqlite")
            _ = try registry.merge(
                (1...5_000).map { index in
                    MemberRecord(
                        profile: MemberProfile(id: "m\(index)", name: "Member \(index)", favoriteDrink: "Tea"),
                        beacons: [
                            .iBeacon(
                                uuid: BenchBeacons.uuid, major: UInt16(CoordinatorBenchmark.store(ofMember: index)), minor: UInt16(index))
                        ],
                        createdAt: nil)
                })
            let broker = InMemoryBroker()
            let connections = try CoordinatorService.mqttConfigurations(for: configuration)
            func service() throws -> CoordinatorService {
                CoordinatorService(
                    configuration: configuration, registry: registry, session: try broker.client(configuration: connections.session),
                    publisher: try broker.client(configuration: connections.publisher), logger: logger,
                    healthInterval: .milliseconds(100))
            }
            // 1. The coordinator makes its persistent session, announces the 5,000 new members (registry events:
            //    start-up work, not the drain's) and goes away.
            let first = try service()
            let making = Task { try await first.run() }
            _ = try await broker.waitForPublications(matching: Topics().coordinatorStatus(id: "bench"), count: 1, timeout: .seconds(10))
            _ = try await broker.waitForPublications(matching: Topics().registryEvents, count: 5_000, timeout: .seconds(30))
            making.cancel()
            _ = await making.result
            // 2. The backlog, queued for it.
            for (topic, payload) in payloads { try broker.publish(topic: topic, payload: payload) }
            // 3. It comes back and drains the backlog; its health reports say how far it got.
            let watcher = try broker.client(clientID: "bench-watcher")
            try watcher.start()
            try watcher.subscribe(Topics().coordinatorHealth(id: "bench"), qos: .atMostOnce)
            let samples = Mutex<[(seconds: Double, cpu: Double, batches: UInt64, events: UInt64)]>([])
            let target = UInt64(batches)
            let watching = Task { [messages = watcher.messages] in
                for await message in messages {
                    guard let health = try? WireCodec.decodeCoordinatorHealth(message.payload) else { continue }
                    samples.withLock { $0.append((Measure.seconds(), Self.processCPUSeconds(), health.batches, health.events)) }
                    if health.batches >= target { break }
                }
            }
            // json-c's decode, timed just before and just after the drain (the machine's speed drifts).
            let decodeBefore = CoordinatorBenchmark.decodeCPUPerBatch(sightingsPerBatch: sightingsPerBatch)
            let second = try service()
            let draining = Task { try await second.run() }
            _ = await watching.value
            draining.cancel()
            _ = await draining.result
            let seen = samples.withLock { $0 }
            guard let from = seen.first(where: { $0.batches > 0 }), let to = seen.first(where: { $0.batches >= target }),
                to.batches > from.batches
            else { throw ValidationError("the coordinator did not report its work") }
            let cpu = (to.cpu - from.cpu) / Double(to.batches - from.batches)
            let rate = Double(to.batches - from.batches) / (to.seconds - from.seconds)
            let decodeCPU = (decodeBefore + CoordinatorBenchmark.decodeCPUPerBatch(sightingsPerBatch: sightingsPerBatch)) / 2
            results.append((cpu, decodeCPU))
            rates.append(rate)
            print(
                "  drain \(round): \(Measure.grouped(rate)) batches/s, CPU per batch \(micros(cpu)) (all threads), of which beyond json-c's decode \(micros(cpu - decodeCPU)); \(Measure.grouped(Double(to.events - from.events))) events published meanwhile"
            )
        }
        // The drain whose share beyond decoding is the median one.
        let median = results.sorted { $0.cpu - $0.decode < $1.cpu - $1.decode }[results.count / 2]
        print(
            "coordinator in memory: \(Measure.grouped(Double(batches))) sighting batches of \(sightingsPerBatch), 100 stores × 10 departments, 5,000 members, \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        print("  CPU per batch      \(micros(median.cpu)) in the median of \(repeats) drains (all threads, user + system, no network)")
        print(
            "  json-c decode      \(micros(median.decode)) of it (one thread: WireCodec.decodeSightingBatch on the same batches, just before and after that drain)"
        )
        print(
            "  beyond decoding    \(micros(median.cpu - median.decode)): deciding, events, the hand-overs between tasks, the in-memory broker"
        )
        print("  rate               \(Measure.grouped(rates.sorted()[rates.count / 2])) batches/s (median)")
    }

    private func micros(_ seconds: Double) -> String { "\((seconds * 1e7).rounded() / 10) µs" }

    /// CPU seconds this process has used, all threads, user + system.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
