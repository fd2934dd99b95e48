import ArgumentParser
import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Dispatch
import Foundation
import Logging
import Synchronization

/// The coordinator service through a real mosquitto on loopback:
/// (1) its sustained rate draining a backlog of sighting batches, next to `mosquitto_sub` draining the same backlog
/// in the same run; (2) the latency from a batch's publish to the `arrived` event it causes, at half that rate.
struct CoordinatorBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinator",
        abstract: "Coordinator service through a real mosquitto: sustained rate against mosquitto_sub, and event latency.",
        discussion: "Needs mosquitto and mosquitto_sub on the PATH and beacon-coordinator built next to beacon-bench.")

    @Option(help: "Sighting batches in the backlog.")
    var batches: Int = 100_000

    @Option(help: "Sightings per batch.")
    var sightingsPerBatch: Int = 10

    @Flag(
        help:
            "Drain the backlog a second time with the coordinator pinned to one core (taskset -c 0), and print the ratio of the two rates.")
    var compareOneCore = false

    @Flag(
        help:
            "Then drain and stream again four times, alternating without webhooks and with two endpoints subscribed to every event (receivers in child processes at idle priority), and print the passes side by side."
    )
    var compareWebhooks = false

    @Flag(
        help:
            "Then drain the backlog four times more, alternating members with static iBeacons and the same members with Eddystone-EID fobs (the backlog carrying each fob's id of now), and print the CPU a sighting's resolution adds."
    )
    var compareEid = false

    @Option(help: "Arrivals timed for the latency figures.")
    var arrivals: Int = 2_000

    @Option(help: "One batch in this many of the latency stream brings a newcomer (each arrival also costs a registry write).")
    var probeEvery: Int = 50

    @Option(help: "The latency stream's rate, as a fraction of the coordinator's measured rate.")
    var latencyLoad: Double = 0.5

    @Option(
        help:
            "The latency stream's rate in batches/s, instead of a fraction of the measured rate (for runs that compare builds at one load)."
    )
    var latencyRate: Double?

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    /// The benchmark chain: 100 stores of 10 departments, 50 members each (members 1…5000).
    static let stores = BenchChain.stores

    /// Member numbers of a store: store 1 has members 1…50, store 2 has 51…100, and so on.
    static func member(inStore store: Int, number: Int) -> Int { (store - 1) * 50 + number % 50 + 1 }

    static func store(ofMember member: Int) -> Int { (member - 1) / 50 + 1 }

    private func measure(in work: String) async throws {
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited + ["max_packet_size 4194304"])
        defer { broker.process.stop() }
        let port = broker.port

        // Members: the backlog's beacons are members 1…5000 (they arrive and then move about); the latency
        // phase greets members 100001… one by one.
        let uuid = BenchBeacons.uuidText
        let chain = BenchChain(work: work, port: port)
        var csv = ""
        for index in 1...5_000 { csv += "m\(index),Member \(index),Tea,ibeacon:\(uuid):\(Self.store(ofMember: index)):\(index),,0,,\n" }
        for index in 0..<arrivals { csv += "n\(index),Newcomer \(index),,ibeacon:\(uuid):1000:\(index),,0,,\n" }
        try chain.writeConfig(members: csv)
        let coordinatorPath = chain.coordinatorPath
        let coordinatorArguments = chain.coordinatorArguments
        let drainTopic = Topics().sightingsFilter(store: nil)

        // 1. Both consumers make their persistent sessions, then go away.
        try await chain.makeSessions(drainTopic: drainTopic)

        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        // json-c's decode is timed just before and just after the drain and the two averaged: this machine's speed
        // drifts by half within minutes, and the coordinator's own share is the small difference of big figures.
        let decodeBefore = Self.decodeCPUPerBatch(sightingsPerBatch: sightingsPerBatch)
        let drained = try await drain(
            chain: chain, broker: broker.process, port: port, drainTopic: drainTopic, boot: "bench", pinned: nil, logger: logger)
        let decodeAfter = Self.decodeCPUPerBatch(sightingsPerBatch: sightingsPerBatch)
        let decodeCPU = (decodeBefore + decodeAfter) / 2
        let coordinatorRate = drained.coordinatorRate
        let oneCore =
            compareOneCore
            ? try await drain(
                chain: chain, broker: broker.process, port: port, drainTopic: drainTopic, boot: "bench-one-core", pinned: "0",
                logger: logger) : nil

        let (health, observations, watcher) = try await Self.watchCoordinator(port: port, logger: logger)
        defer { watcher.cancel() }
        let coordinator = try BenchProcess(coordinatorPath, coordinatorArguments)

        // 4. Latency at a fraction of the coordinator's rate: the stream of known members goes on, and one batch in
        //    `probeEvery` brings a newcomer whose `arrived` event is timed.
        let halfRate = max(latencyRate ?? coordinatorRate * latencyLoad, 1)
        let latencies = try await ArrivalLatencyStream(
            rate: halfRate, arrivals: arrivals, probeEvery: probeEvery, sightingsPerBatch: sightingsPerBatch
        ).run(port: port, observations: observations)
        func percentile(_ p: Double) -> String { ArrivalLatencyStream.percentile(latencies, p) }
        coordinator.stop()
        await health.disconnect(timeout: .seconds(1))

        func micros(_ seconds: Double?) -> String { seconds.map { "\((($0 * 1e7).rounded() / 10)) µs" } ?? "n/a" }
        let subscriberCPUPerBatch = drained.subscriberCPU / Double(batches)
        print(
            "coordinator benchmark: \(Measure.grouped(Double(batches))) sighting batches of \(sightingsPerBatch) (\(drained.payloadBytes / max(batches, 1)) bytes each) through mosquitto on loopback, \(Self.stores) stores × 10 departments, 5,000 members; \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        print(
            "  coordinator        \(Measure.grouped(coordinatorRate)) batches/s (\(Measure.grouped(coordinatorRate * Double(sightingsPerBatch))) sightings/s) draining the backlog in \((drained.coordinatorSeconds * 100).rounded() / 100) s"
        )
        print(
            "  mosquitto_sub      \(Measure.grouped(drained.subscriberRate)) batches/s draining the same backlog in \((drained.subscriberSeconds * 100).rounded() / 100) s"
        )
        print("  ratio              \(Int((coordinatorRate / drained.subscriberRate * 100).rounded())) % of mosquitto_sub")
        print(
            "  CPU per batch      coordinator \(micros(drained.coordinatorCPUPerBatch)), mosquitto_sub \(micros(subscriberCPUPerBatch)) (all threads, user + system); the broker \(micros(drained.brokerCPUPerBatch)) while it sent the coordinator the backlog (\(micros(drained.brokerCPUPerBatchForSubscriber)) for mosquitto_sub)"
        )
        print(
            "                     json-c decode of the same batches \(micros(decodeCPU)) (one thread, in this process: WireCodec.decodeSightingBatch; \(micros(decodeBefore)) before the drain, \(micros(decodeAfter)) after)"
        )
        print(
            "                     the coordinator's own (all but decoding and the receive path): \(micros(drained.coordinatorCPUPerBatch.map { $0 - decodeCPU - subscriberCPUPerBatch }))"
        )
        // The receive path as this coordinator pays it: its network threads (they also send what it publishes).
        let beyondNetwork = drained.coordinatorCPUPerBatch.flatMap { total in drained.networkCPUPerBatch.map { total - $0 - decodeCPU } }
        print(
            "                     its MQTT network threads \(micros(drained.networkCPUPerBatch)) (receiving, acknowledging, publishing); all but those and decoding \(micros(beyondNetwork))"
        )
        if let oneCore {
            print(
                "  one core           \(Measure.grouped(oneCore.coordinatorRate)) batches/s pinned to core 0 (taskset -c 0), \(micros(oneCore.coordinatorCPUPerBatch)) CPU per batch (the broker \(micros(oneCore.brokerCPUPerBatch))); \(ProcessInfo.processInfo.activeProcessorCount) cores ÷ 1 core = \(((coordinatorRate / oneCore.coordinatorRate) * 100).rounded() / 100)×; pinned it drains at \(Int((oneCore.coordinatorRate / oneCore.subscriberRate * 100).rounded())) % of mosquitto_sub"
            )
        }
        print(
            "  latency            publish → arrived event, stream at \(Measure.grouped(halfRate)) batches/s (\(Int((halfRate / coordinatorRate * 100).rounded())) % of the coordinator's rate): p50 \(percentile(0.5)), p99 \(percentile(0.99)) (\(latencies.count) of \(arrivals) newcomers)"
        )
        if compareWebhooks {
            let passes = try await compareWebhooks(
                chain: chain, broker: broker.process, drainTopic: drainTopic, members: csv, logger: logger)
            printWebhookPasses(passes, decodeCPU: decodeCPU)
        }
        if compareEid {
            printEIDPasses(try await compareEID(chain: chain, broker: broker.process, drainTopic: drainTopic, logger: logger))
        }
        try? FileManager.default.removeItem(atPath: work)
    }

    /// A client that records the coordinator's health reports and `arrived` events as they come (subscribed when this
    /// returns); cancel the task to stop recording.
    static func watchCoordinator(port: Int, logger: Logger) async throws -> (MQTTClient, Observations, Task<Void, Never>) {
        let health = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL("mqtt://127.0.0.1:\(port)")), logger: logger)
        try health.start()
        _ = await health.waitUntilConnected(timeout: .seconds(5))
        try health.subscribe(Topics().coordinatorHealth(id: "bench"), qos: .atMostOnce)
        try health.subscribe(Topics().eventsFilter(store: nil), qos: .atLeastOnce)
        _ = await health.waitUntilSubscribed(Topics().eventsFilter(store: nil), timeout: .seconds(5))
        let observations = Observations()
        let watcher = Task { [messages = health.messages] in
            for await message in messages { observations.record(message) }
        }
        return (health, observations, watcher)
    }

    /// What one drain of the backlog measured.
    struct Drain {
        var coordinatorRate: Double
        var coordinatorSeconds: Double
        var coordinatorCPUPerBatch: Double?
        /// The share of `coordinatorCPUPerBatch` its MQTT network threads took.
        var networkCPUPerBatch: Double?
        /// The broker's CPU per batch while it sent the coordinator the backlog.
        var brokerCPUPerBatch: Double?
        /// … and while it sent `mosquitto_sub` the same backlog.
        var brokerCPUPerBatchForSubscriber: Double?
        var subscriberRate: Double
        var subscriberSeconds: Double
        var subscriberCPU: Double
        var payloadBytes: Int
        /// The fobs the coordinator resolved, as its last health report said.
        var fobs: CoordinatorHealth.Fobs? = nil
    }

    /// Queues a backlog of `batches` for both persistent sessions, then lets `mosquitto_sub` drain it and, once it has,
    /// the coordinator (on the CPUs `pinned` names, with `taskset -c`, if any), and measures how each drains it.
    func drain(
        chain: BenchChain, broker: BenchProcess, port: Int, drainTopic: String, boot: String, pinned: String?, logger: Logger,
        fobs: [EddystoneEID]? = nil
    ) async throws -> Drain {
        let coordinatorPath = chain.coordinatorPath
        let coordinatorArguments = chain.coordinatorArguments
        let subscriberArguments = chain.subscriberArguments(topic: drainTopic)
        // 2. The backlog, queued by the broker for both sessions.
        let publisher = try MQTTClient(
            configuration: MQTTConfiguration(broker: BrokerURL("mqtt://127.0.0.1:\(port)"), clientID: "bench-backlog"), logger: logger)
        try publisher.start()
        guard await publisher.waitUntilConnected(timeout: .seconds(5)) else { throw ValidationError("cannot reach the benchmark broker") }
        var payloadBytes = 0
        for (index, (topic, payload)) in Self.backlog(batches: batches, sightingsPerBatch: sightingsPerBatch, boot: boot, fobs: fobs)
            .enumerated()
        {
            payloadBytes += payload.count
            _ = try publisher.publish(topic: topic, payload: payload, qos: .atLeastOnce)
            if index % 1000 == 999 { while publisher.unacknowledgedCount > 2_000 { try await Task.sleep(for: .milliseconds(2)) } }
        }
        while publisher.unacknowledgedCount > 0 { try await Task.sleep(for: .milliseconds(10)) }

        // 3. The consumers drain the same backlog one after the other, each with the machine to itself but for the
        //    broker: drained at the same time, they shared the two cores, and the coordinator's rate on two cores
        //    (set against its rate pinned to one, while the other core serves the broker) said more about
        //    mosquitto_sub than about the coordinator.
        let (health, observations, watcher) = try await Self.watchCoordinator(port: port, logger: logger)
        defer { watcher.cancel() }
        let drainer = try BenchProcess(BenchProcess.which("mosquitto_sub"), subscriberArguments + ["-C", "\(batches)"])
        let brokerBeforeSubscriber = broker.cpuSeconds
        let subscriberDrain = try await BacklogDrain.watch(subscriber: drainer, from: Measure.seconds())
        let brokerForSubscriber = brokerBeforeSubscriber.flatMap { before in broker.cpuSeconds.map { ($0 - before) / Double(batches) } }
        let drainStart = Measure.seconds()
        let brokerBefore = broker.cpuSeconds
        let coordinator =
            try pinned.map { try BenchProcess(BenchProcess.which("taskset"), ["-c", $0, coordinatorPath] + coordinatorArguments) }
            ?? BenchProcess(coordinatorPath, coordinatorArguments)
        var drain = try await BacklogDrain.watch(
            coordinator: coordinator, subscriber: nil, observations: observations,
            target: batches, from: drainStart)
        let brokerCPUPerBatch = brokerBefore.flatMap { before in broker.cpuSeconds.map { ($0 - before) / Double(batches) } }
        drain.subscriberDone = subscriberDrain.subscriberDone
        drain.subscriberCPU = subscriberDrain.subscriberCPU
        let (coordinatorDone, subscriberDone) = (drain.coordinatorDone, drain.subscriberDone)
        let subscriberCPU = drain.subscriberCPU
        let coordinatorSeconds = coordinatorDone ?? .nan
        let subscriberSeconds = subscriberDone ?? .nan
        // The sustained rate: from the first health report that counted work to the one that counted it all, so the
        // coordinator's start-up (loading the registry, merging the members CSV) is not part of it.
        let coordinatorRate = observations.sustainedRate(upTo: UInt64(batches)) ?? Double(batches) / coordinatorSeconds
        let coordinatorCPUPerBatch = drain.coordinatorCPUPerUnit(observations, upTo: batches)
        let networkCPUPerBatch = drain.networkCPUPerUnit(observations, upTo: batches)
        let subscriberRate = Double(batches) / subscriberSeconds

        coordinator.stop()
        drainer.stop()
        watcher.cancel()
        await health.disconnect(timeout: .seconds(1))
        await publisher.disconnect(timeout: .seconds(1))
        return Drain(
            coordinatorRate: coordinatorRate, coordinatorSeconds: coordinatorSeconds, coordinatorCPUPerBatch: coordinatorCPUPerBatch,
            networkCPUPerBatch: networkCPUPerBatch, brokerCPUPerBatch: brokerCPUPerBatch,
            brokerCPUPerBatchForSubscriber: brokerForSubscriber, subscriberRate: subscriberRate,
            subscriberSeconds: subscriberSeconds,
            subscriberCPU: subscriberCPU,
            payloadBytes: payloadBytes, fobs: observations.fobs)
    }

    /// The backlog's batches with their topics: batch `index` comes from store (index % 100) + 1, department
    /// (index / 100) % 10, node `a`, and carries `sightingsPerBatch` members of that store (50 per store), all seen now:
    /// their iBeacons, or with `fobs` (member n's at n − 1) the id each member's fob advertises now.
    static func backlog(batches: Int, sightingsPerBatch: Int, boot: String, fobs: [EddystoneEID]? = nil) -> [(
        topic: String, payload: [UInt8]
    )] {
        let start = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let ids = fobs?.map { $0.beaconKey(counter: UInt32(start.milliseconds / 1000)) }
        return (0..<batches).map { index in
            let store = UInt16(index % stores + 1)
            let department = UInt16((index / stores) % 10)
            let node = NodeAddress(store: store, department: department, node: "a")!
            let sightings = (0..<sightingsPerBatch).map { offset in
                let member = member(inStore: Int(store), number: (index / stores) * sightingsPerBatch + offset)
                return Sighting(
                    beacon: ids?[member - 1] ?? .iBeacon(uuid: BenchBeacons.uuid, major: store, minor: UInt16(member)),
                    rssi: -60.0 - Double(offset),
                    count: 4, txPower: -59, distance: 1.2, proximity: .near, lastSeen: start)
            }
            let payload = WireCodec.encode(
                SightingBatch(node: node, boot: boot, seq: UInt64(index / (stores * 10) + 1), sentAt: start, sightings: sightings))
            return (Topics().sightings(node), payload)
        }
    }

    /// One thread's CPU time to decode one of the backlog's batches (`WireCodec.decodeSightingBatch`: json-c's parse
    /// and the walk into Swift values), averaged over 20,000 decodes of varied batches.
    static func decodeCPUPerBatch(sightingsPerBatch: Int) -> Double {
        let start = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let payloads = (0..<1_000).map { index in
            let store = UInt16(index % stores + 1)
            let node = NodeAddress(store: store, department: UInt16(index % 10), node: "a")!
            let sightings = (0..<sightingsPerBatch).map { offset in
                Sighting(
                    beacon: .iBeacon(
                        uuid: BenchBeacons.uuid, major: store, minor: UInt16(member(inStore: Int(store), number: index + offset))),
                    rssi: -60 - Double(offset), count: 4, txPower: -59, distance: 1.2, proximity: .near, lastSeen: start)
            }
            return WireCodec.encode(SightingBatch(node: node, boot: "bench", seq: UInt64(index + 1), sentAt: start, sightings: sightings))
        }
        var decoded = 0
        let rounds = 20
        let before = Measure.threadCPUSeconds()
        for _ in 0..<rounds {
            for payload in payloads { decoded += (try? WireCodec.decodeSightingBatch(payload).sightings.count) ?? 0 }
        }
        let cpu = Measure.threadCPUSeconds() - before
        precondition(decoded == rounds * payloads.count * sightingsPerBatch, "the benchmark's batches did not decode")
        return cpu / Double(rounds * payloads.count)
    }
}

/// What the benchmark hears from the coordinator: a health counter over time (`counting`: sighting batches by
/// default) and arrival times, recorded by a background task.
final class Observations: Sendable {
    private struct State {
        var batchesSeen: [(time: Double, batches: UInt64)] = []
        var arrivals: [String: ContinuousClock.Instant] = [:]
        var fobs: CoordinatorHealth.Fobs?
    }

    private let state = Mutex(State())
    private let counting: @Sendable (CoordinatorHealth) -> UInt64

    init(counting: @escaping @Sendable (CoordinatorHealth) -> UInt64 = { $0.batches }) {
        self.counting = counting
    }

    func record(_ message: MQTTMessage) {
        let now = Measure.seconds()
        if message.topic.hasSuffix("/health"), let report = try? WireCodec.decodeCoordinatorHealth(message.payload) {
            let count = counting(report)
            state.withLock {
                $0.batchesSeen.append((now, count))
                $0.fobs = report.fobs
            }
        } else if message.topic.hasSuffix("/events"), let event = try? WireCodec.decodeEvent(message.payload),
            case .arrived(let member, _, _, _, _, _) = event.kind, member.id.hasPrefix("n")
        {
            // The network thread's receive time: the benchmark's own task scheduling is not part of the latency.
            let received = message.receivedAt ?? .now
            state.withLock { $0.arrivals[member.id] = received }
        }
    }

    /// Batches per second between the first health report that counted any work and the first that counted `batches`.
    func sustainedRate(upTo batches: UInt64) -> Double? {
        workWindow(upTo: batches).map { Double($0.to.batches - $0.from.batches) / ($0.to.time - $0.from.time) }
    }

    /// The first health report that counted any work and the first that counted `batches`.
    func workWindow(upTo batches: UInt64) -> (from: (time: Double, batches: UInt64), to: (time: Double, batches: UInt64))? {
        state.withLock { state in
            guard let first = state.batchesSeen.first(where: { $0.batches > 0 }),
                let last = state.batchesSeen.first(where: { $0.batches >= batches }), last.time > first.time
            else { return nil }
            return (first, last)
        }
    }

    /// When a health report first counted at least `batches` batches.
    func timeBatchesReached(_ batches: UInt64) -> Double? {
        state.withLock { $0.batchesSeen.first { $0.batches >= batches }?.time }
    }

    var arrivals: [String: ContinuousClock.Instant] { state.withLock { $0.arrivals } }

    /// What the last health report said of the fobs the coordinator resolves.
    var fobs: CoordinatorHealth.Fobs? { state.withLock { $0.fobs } }
}
