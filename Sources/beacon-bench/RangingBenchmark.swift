import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Dispatch
import Foundation
import Logging
import Synchronization

/// Ranging reports of members' phones handled per second by the coordinator service, through a real mosquitto on
/// loopback: a backlog of reports queued for its persistent session is drained, next to `mosquitto_sub` draining the
/// same backlog in the same run — the same method and chain as `coordinator`, so the two rates compare.
struct RangingBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ranging",
        abstract:
            "Coordinator service through a real mosquitto: ranging reports of members' phones handled per second, against mosquitto_sub.",
        discussion: "Needs mosquitto and mosquitto_sub on the PATH and beacon-coordinator built next to beacon-bench.")

    @Option(help: "Ranging reports in the backlog.")
    var reports: Int = 100_000

    @Option(help: "Department beacons per report (the one the phone stands in, near; the others far).")
    var beaconsPerReport: Int = 3

    func validate() throws {
        if reports < 1 { throw ValidationError("--reports must be at least 1") }
        if !(1...10).contains(beaconsPerReport) { throw ValidationError("--beacons-per-report must be 1-10 (a store has 10 departments)") }
    }

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    /// The chain of `coordinator`: 100 stores of 10 departments, 50 members each (members 1…5000), here heard only
    /// through their phones.
    static let members = 5_000

    private func measure(in work: String) async throws {
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited)
        defer { broker.process.stop() }
        let port = broker.port

        // Phone-only members: no beacon in the registry.
        let chain = BenchChain(work: work, port: port)
        try chain.writeConfig(members: (1...Self.members).map { "m\($0),Member \($0),Tea,,,0,,\n" }.joined())
        let coordinatorPath = chain.coordinatorPath
        let coordinatorArguments = chain.coordinatorArguments
        let drainTopic = Topics().rangingFilter(store: nil, member: nil)
        let subscriberArguments = chain.subscriberArguments(topic: drainTopic)

        // 1. Both consumers make their persistent sessions, then go away.
        try await chain.makeSessions(drainTopic: drainTopic)

        // 2. The backlog: member m walks its store's departments, one report at a time, its phone ranging
        //    `beaconsPerReport` departments (the one it stands in near and strong, the next ones far).
        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        let publisher = try MQTTClient(
            configuration: MQTTConfiguration(broker: BrokerURL("mqtt://127.0.0.1:\(port)"), clientID: "bench-backlog"),
            logger: logger)
        try publisher.start()
        guard await publisher.waitUntilConnected(timeout: .seconds(5)) else { throw BenchError("cannot reach the benchmark broker") }
        var payloadBytes = 0
        let start = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        for index in 0..<reports {
            let member = index % Self.members + 1
            let store = UInt16(CoordinatorBenchmark.store(ofMember: member))
            let round = index / Self.members
            let here = (round / 4) % 10
            var beacons: [RangingReport.RangedBeacon] = []
            for offset in 0..<beaconsPerReport {
                let rssi = offset == 0 ? -60.0 : -80.0 - Double(offset)
                beacons.append(
                    .init(
                        department: UInt16((here + offset) % 10), proximity: offset == 0 ? .near : .far, rssi: rssi,
                        accuracy: offset == 0 ? 1.1 : 9.5))
            }
            let report = RangingReport(
                member: "m\(member)", session: "bench\(member)", seq: UInt64(round + 1),
                sentAt: start + .seconds(round), beacons: beacons)
            let payload = WireCodec.encode(report)
            payloadBytes += payload.count
            _ = try publisher.publish(
                topic: Topics().ranging(store: store, member: "m\(member)"), payload: payload, qos: .atLeastOnce)
            if index % 1000 == 999 { while publisher.unacknowledgedCount > 2_000 { try await Task.sleep(for: .milliseconds(2)) } }
        }
        while publisher.unacknowledgedCount > 0 { try await Task.sleep(for: .milliseconds(10)) }

        // 3. Both consumers start together and drain the same backlog; the coordinator's rate is read from its
        //    health reports (`rangingReports`), from the first that counted work to the first that counted it all.
        let health = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL("mqtt://127.0.0.1:\(port)")), logger: logger)
        try health.start()
        _ = await health.waitUntilConnected(timeout: .seconds(5))
        try health.subscribe(Topics().coordinatorHealth(id: "bench"), qos: .atMostOnce)
        _ = await health.waitUntilSubscribed(Topics().coordinatorHealth(id: "bench"), timeout: .seconds(5))
        let observations = Observations(counting: { $0.rangingReports })
        let dropped = Mutex<[String: UInt64]>([:])
        let watcher = Task { [messages = health.messages] in
            for await message in messages {
                observations.record(message)
                if let report = try? WireCodec.decodeCoordinatorHealth(message.payload) { dropped.withLock { $0 = report.dropped } }
            }
        }
        defer { watcher.cancel() }
        let drainStart = Measure.seconds()
        let drainer = try BenchProcess(BenchProcess.which("mosquitto_sub"), subscriberArguments + ["-C", "\(reports)"])
        let coordinator = try BenchProcess(coordinatorPath, coordinatorArguments)
        let drain = try await BacklogDrain.watch(
            coordinator: coordinator, subscriber: drainer, observations: observations,
            target: reports, from: drainStart)
        let (coordinatorDone, subscriberDone) = (drain.coordinatorDone, drain.subscriberDone)
        let subscriberCPU = drain.subscriberCPU
        coordinator.stop()
        drainer.stop()
        await health.disconnect(timeout: .seconds(1))
        await publisher.disconnect(timeout: .seconds(1))
        guard let coordinatorSeconds = coordinatorDone else {
            throw BenchError("the coordinator did not count all \(reports) reports within 300 s (dropped: \(dropped.withLock { $0 }))")
        }
        let coordinatorRate = observations.sustainedRate(upTo: UInt64(reports)) ?? Double(reports) / coordinatorSeconds
        let cpuPerReport = drain.coordinatorCPUPerUnit(observations, upTo: reports)
        let subscriberRate = subscriberDone.map { Double(reports) / $0 }

        print(
            "ranging benchmark: \(Measure.grouped(Double(reports))) ranging reports of \(beaconsPerReport) department beacons (\(payloadBytes / reports) bytes each) through mosquitto on loopback, \(CoordinatorBenchmark.stores) stores × 10 departments, \(Measure.grouped(Double(Self.members))) phone-only members"
        )
        print(
            "  coordinator        \(Measure.grouped(coordinatorRate)) ranging reports/s (\(Measure.grouped(coordinatorRate * Double(beaconsPerReport))) ranged beacons/s) draining the backlog in \((coordinatorSeconds * 100).rounded() / 100) s"
        )
        if let subscriberRate, let subscriberDone {
            print(
                "  mosquitto_sub      \(Measure.grouped(subscriberRate)) reports/s draining the same backlog in \((subscriberDone * 100).rounded() / 100) s"
            )
            print("  ratio              \(Int((coordinatorRate / subscriberRate * 100).rounded())) % of mosquitto_sub")
        }
        print(
            "  CPU per report     coordinator \(cpuPerReport.map { "\(Int(($0 * 1e6).rounded())) µs" } ?? "n/a"), mosquitto_sub \(Int((subscriberCPU / Double(reports) * 1e6).rounded())) µs (all threads, user + system)"
        )
        let drops = dropped.withLock { $0 }
        if !drops.isEmpty {
            print("  dropped            \(drops.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        }
    }
}
