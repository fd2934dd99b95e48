import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshWire
import Foundation
import Logging

/// The coordinator program through a real mosquitto on loopback, tracking a crowd of guest beacons (a million by
/// default): how long a member's sighting takes to become their `arrived` event while the crowd is tracked, and
/// the coordinator's resident memory per tracked beacon.
///
/// The chain is `BenchChain`'s (100 stores × 10 departments, `switchDwell: 0s`, so arrivals do not settle). The crowd
/// is published once, each department node's guests in batches of 500; once the coordinator's health counts them
/// all as tracked, members walk in one at a time (one batch from a probe node each) and each `arrived` is timed from
/// just before its batch is written to the broker to the moment the benchmark's network thread receives the event.
struct CrowdArrivalBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crowd-arrivals",
        abstract: "Coordinator tracking a million guest beacons: a member's sighting → arrived latency, and RSS per tracked beacon.",
        discussion: "Needs mosquitto on the PATH and beacon-coordinator built next to beacon-bench (release).")

    @Option(help: "Guest beacons in the crowd.")
    var guests: Int = 1_000_000

    @Option(help: "Member arrivals timed.")
    var arrivals: Int = 50

    @Option(help: "Milliseconds between two arrivals.")
    var spacing: Int = 500

    func validate() throws {
        guard guests > 0, (1...60_000).contains(arrivals), spacing >= 0 else {
            throw ValidationError("--guests must be positive, --arrivals 1…60000, --spacing not negative")
        }
    }

    func run() throws {
        let benchmark = self
        try BenchRun.blocking { try await benchmark.measure() }
    }

    private func measure() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-crowd-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited + ["max_packet_size 4194304"])
        defer { broker.process.stop() }
        let chain = BenchChain(work: work, port: broker.port)
        var csv = ""
        for index in 0..<arrivals { csv += "n\(index),Newcomer \(index),,ibeacon:\(BenchBeacons.uuidText):1000:\(index),,0,,\n" }
        try chain.writeConfig(members: csv)

        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        let watcher = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL(broker.url)), logger: logger)
        try watcher.start()
        guard await watcher.waitUntilConnected(timeout: .seconds(5)) else { throw BenchError("cannot reach the benchmark broker") }
        try watcher.subscribe(Topics().coordinatorHealth(id: "bench"), qos: .atMostOnce)
        try watcher.subscribe(Topics().eventsFilter(store: nil), qos: .atLeastOnce)
        _ = await watcher.waitUntilSubscribed(Topics().eventsFilter(store: nil), timeout: .seconds(5))
        let observations = Observations(counting: { UInt64(max($0.tracked, 0)) })
        let watching = Task { [messages = watcher.messages] in
            for await message in messages { observations.record(message) }
        }
        defer { watching.cancel() }

        let coordinator = try BenchProcess(chain.coordinatorPath, chain.coordinatorArguments)
        defer { coordinator.stop() }
        let startDeadline = Measure.seconds() + 60
        while observations.timeBatchesReached(0) == nil {
            guard Measure.seconds() < startDeadline, coordinator.isRunning else { throw BenchError("the coordinator did not start") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let residentBefore = coordinator.memory.resident

        // The crowd: guest `index` in store `index % 100 + 1`, department `(index / 100) % 10`.
        let publisher = try StreamPublisher(port: broker.port, clientID: "bench-crowd")
        let stores = BenchChain.stores
        let perNode = (guests + stores * 10 - 1) / (stores * 10)
        let feedStart = Measure.seconds()
        for store in 0..<stores {
            for department in 0..<10 {
                let node = NodeAddress(store: UInt16(store + 1), department: UInt16(department), node: "a")!
                var sequence: UInt64 = 0
                var sightings: [Sighting] = []
                func flush() throws {
                    // Stamped when published, as a scanner would: the crowd's readings age as they were heard.
                    let now = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
                    for index in sightings.indices { sightings[index].lastSeen = now }
                    sequence += 1
                    let payload = WireCodec.encode(
                        SightingBatch(node: node, boot: "crowd", seq: sequence, sentAt: now, sightings: sightings))
                    try publisher.publish(
                        StreamPublisher.packet(
                            topic: Topics().sightings(node),
                            payload: payload))
                    sightings.removeAll(keepingCapacity: true)
                }
                for round in 0..<perNode {
                    let index = store + stores * (department + 10 * round)
                    guard index < guests else { break }
                    sightings.append(
                        Sighting(
                            beacon: .iBeacon(
                                uuid: BenchBeacons.uuid, major: UInt16(20_000 + index / 65_536), minor: UInt16(index % 65_536)),
                            rssi: -60, count: 4, txPower: -59, distance: 1.2, proximity: .near, lastSeen: Timestamp(milliseconds: 0)))
                    if sightings.count == 500 { try flush() }
                }
                if !sightings.isEmpty { try flush() }
            }
        }
        let feedDeadline = Measure.seconds() + 600
        while observations.timeBatchesReached(UInt64(guests)) == nil {
            guard Measure.seconds() < feedDeadline, coordinator.isRunning else {
                throw BenchError("the coordinator did not track the whole crowd")
            }
            publisher.drainAcknowledgements()
            try await Task.sleep(for: .milliseconds(50))
        }
        let fed = Measure.seconds() - feedStart
        let residentAfter = coordinator.memory.resident

        // Members walk in one at a time, each heard once by a probe node of store 1.
        var published: [String: ContinuousClock.Instant] = [:]
        let probe = NodeAddress(store: 1, department: 0, node: "probe")!
        let arrivalsStart = Measure.seconds()
        for index in 0..<arrivals {
            let at = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
            let sighting = Sighting(
                beacon: .iBeacon(uuid: BenchBeacons.uuid, major: 1000, minor: UInt16(index)), rssi: -55, count: 4,
                txPower: -59, distance: 1, proximity: .near, lastSeen: at)
            let packet = StreamPublisher.packet(
                topic: Topics().sightings(probe),
                payload: WireCodec.encode(
                    SightingBatch(
                        node: probe, boot: "probe", seq: UInt64(index + 1), sentAt: at,
                        sightings: [sighting])))
            published["n\(index)"] = .now
            try publisher.publish(packet)
            try await Task.sleep(for: .milliseconds(spacing))
        }
        let arrivalDeadline = Measure.seconds() + 10
        while observations.arrivals.count < arrivals && Measure.seconds() < arrivalDeadline {
            publisher.drainAcknowledgements()
            try await Task.sleep(for: .milliseconds(20))
        }
        let arrivalsSeconds = Measure.seconds() - arrivalsStart
        let events = observations.arrivals
        let latencies = published.compactMap { id, sent in events[id].map { ($0 - sent).inSeconds * 1000 } }.sorted()
        await watcher.disconnect(timeout: .seconds(1))

        func figure(_ value: Double?) -> String { value.map { "\(($0 * 100).rounded() / 100) ms" } ?? "n/a" }
        print(
            "crowd arrivals benchmark: the coordinator (release) through mosquitto on loopback, \(stores) stores × 10 departments, arrival settling off (switchDwell 0s)"
        )
        print(
            "  crowd              \(Measure.grouped(Double(guests))) guest beacons published in batches of 500, all tracked after \((fed * 10).rounded() / 10) s"
        )
        print(
            "  memory             coordinator RSS \(Measure.megabytes(residentBefore)) → \(Measure.megabytes(residentAfter)): \(Measure.grouped(Double(residentAfter - residentBefore) / Double(guests))) bytes per tracked beacon"
        )
        print(
            "  arrival latency    member's batch written to the broker → its arrived event received, \(latencies.count) of \(arrivals) members, one every \(spacing) ms over \((arrivalsSeconds * 10).rounded() / 10) s: p50 \(figure(latencies.isEmpty ? nil : latencies[latencies.count / 2])), worst \(figure(latencies.last))"
        )
    }
}
