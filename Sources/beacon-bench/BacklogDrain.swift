/// How the coordinator and `mosquitto_sub` drained the same backlog, sampled every 5 ms: when each was done (seconds
/// after the start), the coordinator's CPU over time (to take the same window as its rate from health reports), its
/// network threads' share of it, and `mosquitto_sub`'s last CPU reading before it exited.
struct BacklogDrain {
    var coordinatorDone: Double?
    var subscriberDone: Double?
    var coordinatorCPU: [(time: Double, seconds: Double)] = []
    /// The CPU of the coordinator's MQTT network threads (`mqtt-network`: reading, acknowledging and sending).
    var networkCPU: [(time: Double, seconds: Double)] = []
    var subscriberCPU = 0.0

    /// Samples both processes until the coordinator's health has counted `target` and `mosquitto_sub` (if any) has
    /// exited, or `limit` seconds have passed since `start`.
    static func watch(
        coordinator: BenchProcess, subscriber: BenchProcess?, observations: Observations, target: Int, from start: Double,
        limit: Double = 300
    ) async throws -> BacklogDrain {
        var drain = BacklogDrain()
        while drain.coordinatorDone == nil || (subscriber != nil && drain.subscriberDone == nil), Measure.seconds() < start + limit {
            if let subscriber, drain.subscriberDone == nil {
                if let seconds = subscriber.cpuSeconds { drain.subscriberCPU = seconds }
                if !subscriber.isRunning { drain.subscriberDone = Measure.seconds() - start }
            }
            if drain.coordinatorDone == nil, let reached = observations.timeBatchesReached(UInt64(target)) {
                drain.coordinatorDone = reached - start
            }
            if drain.coordinatorDone == nil, let seconds = coordinator.cpuSeconds {
                let time = Measure.seconds()
                drain.coordinatorCPU.append((time, seconds))
                if let network = coordinator.threadCPUSeconds(named: "mqtt-network") { drain.networkCPU.append((time, network)) }
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return drain
    }

    /// Samples `mosquitto_sub` alone until it has exited, or `limit` seconds have passed since `start`.
    static func watch(subscriber: BenchProcess, from start: Double, limit: Double = 300) async throws -> BacklogDrain {
        var drain = BacklogDrain()
        while drain.subscriberDone == nil, Measure.seconds() < start + limit {
            if let seconds = subscriber.cpuSeconds { drain.subscriberCPU = seconds }
            if !subscriber.isRunning { drain.subscriberDone = Measure.seconds() - start }
            try await Task.sleep(for: .milliseconds(5))
        }
        return drain
    }

    /// The coordinator's CPU per unit of work (batch, report) between the first health report that counted any work
    /// and the first that counted `target`, so that its start-up is not part of it; `nil` without such a window.
    func coordinatorCPUPerUnit(_ observations: Observations, upTo target: Int) -> Double? {
        Self.perUnit(coordinatorCPU, observations, upTo: target)
    }

    /// The same for the coordinator's network threads alone.
    func networkCPUPerUnit(_ observations: Observations, upTo target: Int) -> Double? {
        Self.perUnit(networkCPU, observations, upTo: target)
    }

    private static func perUnit(
        _ samples: [(time: Double, seconds: Double)], _ observations: Observations, upTo target: Int
    ) -> Double? {
        observations.workWindow(upTo: UInt64(target)).flatMap { window -> Double? in
            func cpu(at time: Double) -> Double? { samples.last { $0.time <= time }?.seconds }
            guard let from = cpu(at: window.from.time), let to = cpu(at: window.to.time), window.to.batches > window.from.batches
            else { return nil }
            return (to - from) / Double(window.to.batches - window.from.batches)
        }
    }
}
