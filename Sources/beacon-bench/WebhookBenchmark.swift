import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshTesting
import Foundation
import Logging

/// Webhooks as a store runs them: the real `beacon-coordinator` on a SQLite registry, mosquitto on loopback, and
/// receivers of this process (HTTP on loopback, answering at once):
/// (1) side by side in one run, the coordinator without webhooks and with two endpoints subscribed to every event, at
/// the same stream of arrivals: publish → `arrived` latency and the coordinator's CPU per arrival, and with webhooks
/// the `arrived` event (as MQTT delivered it) → the POST at the receiver;
/// (2) a backlog of deliveries left in the outbox, drained by a coordinator started on it.
struct WebhookBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Webhooks: event → POST latency, the coordinator with and without two endpoints, and a backlog drained.",
        discussion: "Needs mosquitto on the PATH and beacon-coordinator built next to beacon-bench.")

    @Option(help: "Arrivals per second in the latency stream (each batch brings one).")
    var rate: Double = 100

    @Option(help: "Arrivals timed in each of the two latency runs.")
    var arrivals: Int = 2_000

    @Option(help: "Deliveries in the backlog drained.")
    var backlog: Int = 100_000

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    private func measure(in work: String) async throws {
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited)
        defer { broker.process.stop() }
        let chain = BenchChain(work: work, port: broker.port)
        let uuid = BenchBeacons.uuidText
        var csv = ""
        for index in 1...5_000 {
            csv += "m\(index),Member \(index),Tea,ibeacon:\(uuid):\(CoordinatorBenchmark.store(ofMember: index)):\(index),,0,,\n"
        }
        for index in 0..<(2 * arrivals) { csv += "n\(index),Newcomer \(index),,ibeacon:\(uuid):1000:\(index),,0,,\n" }
        try chain.writeConfig(members: csv)
        let plainConfig = try String(contentsOfFile: work + "/coordinator.yaml", encoding: .utf8)
        try "bench-secret\n".write(toFile: work + "/hook.secret", atomically: true, encoding: .utf8)
        let first = try await WebhookReceiver.start(certificates: nil)
        let second = try await WebhookReceiver.start(certificates: nil)
        let every = "[arrived, moved, left, promo, checkin, node, alert, member-forgotten]"
        let hooked =
            plainConfig + """

                webhooks:
                  - {name: first, url: "\(first.url)", secretFile: hook.secret, events: \(every)}
                  - {name: second, url: "\(second.url)", secretFile: hook.secret, events: \(every)}
                """
        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning

        // 1. The same stream twice: without webhooks, then with two.
        var runs: [(name: String, latencies: [Double], cpuPerArrival: Double?)] = []
        var toWebhook: [Double] = []
        for (index, config) in [plainConfig, hooked].enumerated() {
            try config.write(toFile: work + "/coordinator.yaml", atomically: true, encoding: .utf8)
            let (watch, observations, watcher) = try await CoordinatorBenchmark.watchCoordinator(port: broker.port, logger: logger)
            let coordinator = try BenchProcess(chain.coordinatorPath, chain.coordinatorArguments)
            try await Task.sleep(for: .seconds(3))
            let cpuBefore = coordinator.cpuSeconds
            let latencies = try await ArrivalLatencyStream(
                rate: rate, arrivals: arrivals, probeEvery: 1, sightingsPerBatch: 1, firstNewcomer: index * arrivals,
                boot: "webhooks-\(index)"
            ).run(port: broker.port, observations: observations)
            var cpu: Double?
            if let after = coordinator.cpuSeconds, let before = cpuBefore { cpu = after - before }
            if index == 1 {
                _ = await eventually(timeout: .seconds(30)) { first.count >= arrivals && second.count >= arrivals }
                let arrivedAt = observations.arrivals
                for post in first.received + second.received {
                    guard let member = Self.member(in: post.text), member.hasPrefix("n"), let arrived = arrivedAt[member],
                        post.text.contains(#""type":"arrived""#)
                    else { continue }
                    toWebhook.append((post.at - arrived).inSeconds * 1000)
                }
                toWebhook.sort()
            }
            coordinator.stop()
            watcher.cancel()
            await watch.disconnect(timeout: .seconds(1))
            runs.append((index == 0 ? "without webhooks" : "two webhooks    ", latencies, cpu.map { $0 / Double(max(latencies.count, 1)) }))
        }

        // 2. A backlog left in the outbox, drained by a coordinator started on it.
        let registry = try RegistryLocation(work + "/bench.sqlite").open(environment: [:])
        var changes = RegistryChanges()
        let created = WallClock.now()
        for index in 0..<backlog {
            changes.queueWebhook(
                WebhookDelivery(
                    endpoint: "first", store: 1, eventID: "backlog-\(index)",
                    body: Array(
                        #"{"v":1,"id":"backlog-\#(index)","type":"left","store":1,"at":\#(created.milliseconds),"member":{"id":"m1"},"department":1,"dwellSeconds":60}"#
                            .utf8),
                    createdAt: created))
        }
        try registry.apply(changes)
        let before = first.count
        let started = ContinuousClock.now
        let coordinator = try BenchProcess(chain.coordinatorPath, chain.coordinatorArguments)
        let drained = await eventually(timeout: .seconds(600), interval: .milliseconds(50)) { first.count - before >= backlog }
        let took = (ContinuousClock.now - started).inSeconds
        let drainCPU = coordinator.cpuSeconds
        coordinator.stop()
        await first.stop()
        await second.stop()

        print(
            "webhooks benchmark: beacon-coordinator (SQLite registry) with mosquitto and two receivers on loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        for run in runs {
            print(
                "  \(run.name)   publish → arrived at \(Measure.grouped(rate))/s: p50 \(ArrivalLatencyStream.percentile(run.latencies, 0.5)), p99 \(ArrivalLatencyStream.percentile(run.latencies, 0.99)) (\(run.latencies.count) of \(arrivals)); coordinator CPU per arrival \(run.cpuPerArrival.map { "\((($0 * 1e7).rounded() / 10)) µs" } ?? "n/a")"
            )
        }
        print(
            "  event → webhook    arrived (MQTT) → POST received, both endpoints: p50 \(ArrivalLatencyStream.percentile(toWebhook, 0.5)), p99 \(ArrivalLatencyStream.percentile(toWebhook, 0.99)) (\(toWebhook.count) POSTs)"
        )
        print(
            "  backlog drained    \(Measure.grouped(Double(backlog))) deliveries in \((took * 100).rounded() / 100) s from the coordinator's start: \(Measure.grouped(Double(backlog) / took)) /s\(drained ? "" : " (NOT all delivered)"); coordinator CPU \(drainCPU.map { "\(($0 * 100).rounded() / 100) s" } ?? "n/a")"
        )
    }

    /// The member id in a webhook body (`"member":{"id":"…"`).
    static func member(in body: String) -> String? {
        guard let start = body.range(of: #""member":{"id":""#) else { return nil }
        return String(body[start.upperBound...].prefix { $0 != "\"" })
    }
}

extension Duration {
    fileprivate var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
