import ArgumentParser
import BeaconMeshCore
import BeaconMeshWire

/// Decodes the sighting batch the coordinator benchmark publishes (and parses its topic) over and over: the
/// coordinator's per-message cost before the presence engine, on one core.
struct WireBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire", abstract: "Sighting batch decoding (json-c) and topic parsing: batches/s on one core.")

    @Option(help: "Batches decoded.")
    var batches: Int = 200_000

    @Option(help: "Sightings per batch.")
    var sightingsPerBatch: Int = 5

    func run() throws {
        let uuid = BenchBeacons.uuid
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        let node = NodeAddress(store: 12, department: 3, node: "a")!
        let sightings = (0..<sightingsPerBatch).map { offset in
            Sighting(beacon: .iBeacon(uuid: uuid, major: 12, minor: UInt16(600 + offset)), rssi: -60 - Double(offset), count: 4,
                     txPower: -59, distance: 1.2, proximity: .near, lastSeen: now)
        }
        let payload = WireCodec.encode(SightingBatch(node: node, boot: "bench", seq: 1, sentAt: now, sightings: sightings))
        let topics = Topics(root: "beaconmesh")
        let topic = topics.sightings(node)

        var decoded = 0
        let start = Measure.threadCPUSeconds()
        for _ in 0..<batches {
            guard case .sightings(let address)? = topics.parse(topic) else { throw ValidationError("the topic does not parse") }
            let batch = try WireCodec.decodeSightingBatch(payload)
            if batch.node == address { decoded += batch.sightings.count }
        }
        let cpu = Measure.threadCPUSeconds() - start
        print("wire benchmark: sighting batch of \(sightingsPerBatch) (\(payload.count) bytes) with its topic, decoded \(Measure.grouped(Double(batches))) times")
        print("  throughput         \(Measure.grouped(Double(batches) / cpu)) batches/s on one core (\((cpu / Double(batches) * 1e7).rounded() / 10) µs per batch; \(decoded / batches) sightings each)")
    }
}
