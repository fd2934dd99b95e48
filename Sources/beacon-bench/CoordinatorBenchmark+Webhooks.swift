import BeaconMeshMQTT
import Foundation
import Logging

/// `beacon-bench coordinator --compare-webhooks`: the same drain and latency stream, alternating without webhooks and
/// with two endpoints subscribed to every event (`BenchWebhookReceiver`s on loopback, answering at once), each
/// pass on a registry of its own so that every pass greets the same arrivals.
extension CoordinatorBenchmark {
    /// What one pass measured.
    struct WebhookPass {
        var withWebhooks: Bool
        var drain: Drain
        var latencies: [Double]
        /// POSTs the two receivers got during the pass.
        var posts: Int
    }

    func compareWebhooks(
        chain: BenchChain, broker: BenchProcess, drainTopic: String, members: String, logger: Logger
    ) async throws -> [WebhookPass] {
        try "bench-secret\n".write(toFile: chain.work + "/hook.secret", atomically: true, encoding: .utf8)
        let first = try await BenchWebhookReceiver.start(in: chain.work, name: "first")
        let second = try await BenchWebhookReceiver.start(in: chain.work, name: "second")
        defer {
            first.process.stop()
            second.process.stop()
        }
        let every = "[arrived, moved, left, promo, checkin, node, alert, member-forgotten]"
        let webhooks = """

            webhooks:
              - {name: first, url: "\(first.url)", secretFile: hook.secret, events: \(every)}
              - {name: second, url: "\(second.url)", secretFile: hook.secret, events: \(every)}
            """
        var passes: [WebhookPass] = []
        for (index, withWebhooks) in [false, true, false, true].enumerated() {
            try chain.writeConfig(members: members, database: "bench-pass-\(index).sqlite")
            if withWebhooks {
                let path = chain.work + "/coordinator.yaml"
                try (try String(contentsOfFile: path, encoding: .utf8) + webhooks).write(toFile: path, atomically: true, encoding: .utf8)
            }
            let postsBefore = first.posts() + second.posts()
            let drained = try await drain(
                chain: chain, broker: broker, port: chain.port, drainTopic: drainTopic, boot: "bench-pass-\(index)", pinned: nil,
                logger: logger)
            let (health, observations, watcher) = try await Self.watchCoordinator(port: chain.port, logger: logger)
            let coordinator = try BenchProcess(chain.coordinatorPath, chain.coordinatorArguments)
            let latencies = try await ArrivalLatencyStream(
                rate: max(latencyRate ?? drained.coordinatorRate * latencyLoad, 1), arrivals: arrivals, probeEvery: probeEvery,
                sightingsPerBatch: sightingsPerBatch, boot: "latency-pass-\(index)"
            ).run(port: chain.port, observations: observations)
            coordinator.stop()
            watcher.cancel()
            await health.disconnect(timeout: .seconds(1))
            try await Task.sleep(for: .milliseconds(250))  // the receivers write their counts every 100 ms
            passes.append(
                WebhookPass(
                    withWebhooks: withWebhooks, drain: drained, latencies: latencies, posts: first.posts() + second.posts() - postsBefore))
        }
        return passes
    }

    func printWebhookPasses(_ passes: [WebhookPass], decodeCPU: Double) {
        func micros(_ seconds: Double?) -> String { seconds.map { "\((($0 * 1e7).rounded() / 10)) µs" } ?? "n/a" }
        print("  webhooks           the same drain and latency stream, alternating, each pass on a registry of its own:")
        for pass in passes {
            let own = pass.drain.coordinatorCPUPerBatch.map { $0 - decodeCPU - pass.drain.subscriberCPU / Double(batches) }
            print(
                "    \(pass.withWebhooks ? "two webhooks    " : "without webhooks") \(Measure.grouped(pass.drain.coordinatorRate)) batches/s, CPU per batch \(micros(pass.drain.coordinatorCPUPerBatch)) (its own \(micros(own))); publish → arrived p50 \(ArrivalLatencyStream.percentile(pass.latencies, 0.5)), p99 \(ArrivalLatencyStream.percentile(pass.latencies, 0.99)); \(Measure.grouped(Double(pass.posts))) POSTs received"
            )
        }
    }
}
