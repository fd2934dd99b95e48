import ArgumentParser
import BeaconMeshCore
import BeaconMeshWire

/// Decodes the sighting batch the coordinator benchmark publishes (and parses its topic) over and over — the
/// coordinator's per-message cost before the presence engine — and encodes the big payloads the way the scanner
/// and the coordinator write them (a crowd's sighting batch, a busy store's presence snapshot), on one core.
struct WireBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire",
        abstract:
            "Sighting batch decoding (json-c) and topic parsing, and encoding of sighting batches and presence snapshots: rates on one core."
    )

    @Option(help: "Batches decoded.")
    var batches: Int = 200_000

    @Option(help: "Sightings per batch.")
    var sightingsPerBatch: Int = 5

    @Option(help: "Sightings encoded, in batches of --crowd (the scanner's batch with a crowd in view).")
    var encodedSightings: Int = 2_000_000

    @Option(help: "Beacons in view of the scanner whose batches are encoded (sightings per encoded batch).")
    var crowd: Int = 5_000

    @Option(help: "Members present in the presence snapshot encoded.")
    var members: Int = 500

    func run() throws {
        try decodeBatches()
        encodeBatches()
        encodeSnapshots()
    }

    private static let now = Timestamp(milliseconds: 1_800_000_000_000)
    private static let node = NodeAddress(store: 12, department: 3, node: "a")!

    private static func sightings(_ count: Int) -> [Sighting] {
        (0..<count).map { offset in
            Sighting(
                beacon: .iBeacon(uuid: BenchBeacons.uuid, major: 12, minor: UInt16(truncatingIfNeeded: 600 + offset)),
                rssi: -60 - Double(offset % 30) / 2, count: 4, txPower: -59, distance: 1.2, proximity: .near, lastSeen: now)
        }
    }

    private func decodeBatches() throws {
        let payload = WireCodec.encode(
            SightingBatch(
                node: Self.node, boot: "bench", seq: 1, sentAt: Self.now,
                sightings: Self.sightings(sightingsPerBatch)))
        let topics = Topics()
        let topic = topics.sightings(Self.node)

        var decoded = 0
        let start = Measure.threadCPUSeconds()
        for _ in 0..<batches {
            guard case .sightings(let address)? = topics.parse(topic) else { throw ValidationError("the topic does not parse") }
            let batch = try WireCodec.decodeSightingBatch(payload)
            if batch.node == address { decoded += batch.sightings.count }
        }
        let cpu = Measure.threadCPUSeconds() - start
        print(
            "wire benchmark: sighting batch of \(sightingsPerBatch) (\(payload.count) bytes) with its topic, decoded \(Measure.grouped(Double(batches))) times"
        )
        print(
            "  throughput         \(Measure.grouped(Double(batches) / cpu)) batches/s on one core (\((cpu / Double(batches) * 1e7).rounded() / 10) µs per batch; \(decoded / batches) sightings each)"
        )
    }

    /// The scanner's cost: sighting batches of `crowd` sightings encoded until `encodedSightings` are written.
    private func encodeBatches() {
        let batch = SightingBatch(node: Self.node, boot: "bench", seq: 1, sentAt: Self.now, sightings: Self.sightings(crowd))
        let rounds = max(1, encodedSightings / max(1, crowd))
        var bytes = 0
        let start = Measure.threadCPUSeconds()
        for round in 0..<rounds {
            var next = batch
            next.seq = UInt64(round + 1)
            bytes += WireCodec.encode(next).count
        }
        let cpu = Measure.threadCPUSeconds() - start
        let sightings = Double(rounds * crowd)
        print(
            "sighting batch of \(Measure.grouped(Double(crowd))) (\(Measure.grouped(Double(bytes / rounds))) bytes), encoded \(Measure.grouped(Double(rounds))) times"
        )
        print(
            "  throughput         \(Measure.grouped(sightings / cpu)) sightings/s on one core (\((cpu / sightings * 1e10).rounded() / 10) ns per sighting)"
        )
    }

    /// The coordinator's cost: the retained presence snapshot of a store with `members` present.
    private func encodeSnapshots() {
        let present = (0..<members).map { index in
            PresenceSnapshot.PresentMember(
                member: MemberProfile(
                    id: "member-\(index)", name: "Member Nº \(index)", favoriteDrink: index % 2 == 0 ? "Flat white" : nil,
                    visits: index, lastVisitAt: Self.now, customFields: ["tier": "gold"]),
                department: UInt16(10 + index % 5), departmentName: "Department \(index % 5)", proximity: .near,
                arrivedAt: Self.now, inDepartmentSince: Self.now, lastSeen: Self.now, confidence: 0.87)
        }
        let snapshot = PresenceSnapshot(
            store: 12, name: "Bench store", updatedAt: Self.now, members: present,
            occupancy: Dictionary(
                uniqueKeysWithValues: (0..<5).map { (UInt16(10 + $0), PresenceSnapshot.Occupancy(members: members / 5, guests: 900)) }),
            nodes: (0..<5).map { .init(department: UInt16(10 + $0), node: "a", state: .online) })
        let rounds = max(1, 2_000_000 / max(1, members))
        var bytes = 0
        let start = Measure.threadCPUSeconds()
        for _ in 0..<rounds { bytes += WireCodec.encode(snapshot).count }
        let cpu = Measure.threadCPUSeconds() - start
        print(
            "presence snapshot of \(Measure.grouped(Double(members))) members (\(Measure.grouped(Double(bytes / rounds))) bytes), encoded \(Measure.grouped(Double(rounds))) times"
        )
        print(
            "  throughput         \(Measure.grouped(Double(rounds) / cpu)) snapshots/s on one core (\((cpu / Double(rounds) * 1e7).rounded() / 10) µs per snapshot, \((cpu / Double(rounds * members) * 1e10).rounded() / 10) ns per member)"
        )
    }
}
