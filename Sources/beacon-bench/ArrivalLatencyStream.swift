import BeaconMeshCore
import BeaconMeshWire
import Foundation

/// The coordinator benchmarks' latency stream: sighting batches of the bench chain's known members at `rate`
/// batches/s, one batch in `probeEvery` bringing a newcomer (`n{index}`, beacon major 1000, minor `index`) whose
/// publish → `arrived` time is measured.
///
/// The payloads are made beforehand, stamped with the times they will be published at, so that the benchmark's own
/// JSON encoding does not compete with the coordinator for the CPU. The first second is a warm-up without newcomers
/// (the stream's nodes `b` appear at once and are announced).
struct ArrivalLatencyStream {
    var rate: Double
    var arrivals: Int
    var probeEvery: Int
    var sightingsPerBatch: Int
    /// The first newcomer's index (runs on one coordinator use distinct newcomers).
    var firstNewcomer = 0
    /// The stream nodes' boot id (runs on one coordinator use distinct boots, so that `seq` starts afresh).
    var boot = "latency"

    /// Publishes the stream to the broker on `port` and returns each newcomer's publish → `arrived` latency in
    /// milliseconds, sorted (those not greeted within 10 s after the stream are missing).
    func run(port: Int, observations: Observations) async throws -> [Double] {
        let rate = max(self.rate, 1)
        let interval = 1 / rate
        let lead = 2.0
        let streamStart = Measure.seconds() + lead
        let wallStart = Date().timeIntervalSince1970 + lead
        let stores = BenchChain.stores
        var stream: [(packet: [UInt8], newcomer: Int?)] = []
        var sequence: UInt64 = 0
        let warmup = Int(rate)
        for step in 0..<(warmup + arrivals * probeEvery) {
            let store = UInt16(step % stores + 1)
            let department = UInt16((step / stores) % 10)
            if step % (stores * 10) == 0 { sequence += 1 }
            let node = NodeAddress(store: store, department: department, node: "b")!
            let now = Timestamp(milliseconds: Int64((wallStart + Double(step) * interval) * 1000))
            let newcomer = step >= warmup && (step - warmup) % probeEvery == 0 ? firstNewcomer + (step - warmup) / probeEvery : nil
            var sightings: [Sighting] = []
            if let newcomer {
                sightings.append(
                    Sighting(
                        beacon: .iBeacon(uuid: BenchBeacons.uuid, major: 1000, minor: UInt16(newcomer)), rssi: -60, count: 4,
                        txPower: -59, distance: 1, proximity: .near, lastSeen: now))
            }
            for offset in sightings.count..<sightingsPerBatch {
                let member = CoordinatorBenchmark.member(inStore: Int(store), number: (step / stores) * sightingsPerBatch + offset)
                sightings.append(
                    Sighting(
                        beacon: .iBeacon(uuid: BenchBeacons.uuid, major: store, minor: UInt16(member)), rssi: -62, count: 4,
                        txPower: -59, distance: 1.2, proximity: .near, lastSeen: now))
            }
            let payload = WireCodec.encode(SightingBatch(node: node, boot: boot, seq: sequence, sentAt: now, sightings: sightings))
            stream.append(
                (
                    packet: StreamPublisher.packet(
                        topic: Topics().sightings(node), payload: payload),
                    newcomer: newcomer
                ))
        }
        let publisher = try StreamPublisher(port: port, clientID: "bench-stream-\(boot)")
        var published: [String: ContinuousClock.Instant] = [:]
        for (step, batch) in stream.enumerated() {
            // Paced a millisecond at a time: sleeping before every batch would cost more CPU than publishing it.
            let due = streamStart + Double(step) * interval
            while Measure.seconds() < due { try await Task.sleep(for: .milliseconds(1)) }
            if let newcomer = batch.newcomer { published["n\(newcomer)"] = .now }
            try publisher.publish(batch.packet)
        }
        let deadline = Measure.seconds() + 10
        while Measure.seconds() < deadline {
            let events = observations.arrivals
            if published.keys.allSatisfy({ events[$0] != nil }) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let events = observations.arrivals
        return published.compactMap { id, sent in events[id].map { ($0 - sent).inSeconds * 1000 } }.sorted()
    }

    /// The `p` quantile of sorted `latencies` in milliseconds, as text.
    static func percentile(_ latencies: [Double], _ p: Double) -> String {
        guard !latencies.isEmpty else { return "n/a" }
        let value = latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        return "\((value * 100).rounded() / 100) ms"
    }
}
