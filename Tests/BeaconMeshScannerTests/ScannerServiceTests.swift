import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshTesting
import BeaconMeshWire
import Foundation
import Logging
import Testing

@testable import BeaconMeshScanner

/// A scanner replaying a synthetic capture at `--speed max` through an in-memory broker, on a manual clock.
private struct ReplayFixture {
    static let node = NodeAddress(store: 1, department: 10, node: "a")!
    static let topics = Topics(root: "beaconmesh")

    let broker = InMemoryBroker()
    let clock = ManualClock()
    let client: InMemoryMQTTClient
    let service: ScannerService
    let adverts: Int
    let directory: String

    /// `adverts` records from 10 beacons, one every millisecond of capture time.
    init(adverts: Int, configure: (inout ScannerConfiguration) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-scanner-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let capture = directory + "/capture.btsnoop"
        try SyntheticCapture.write(to: capture, adverts: adverts, beacons: 10, interval: .milliseconds(1))
        self.adverts = adverts
        var configuration = ScannerConfiguration(node: Self.node, broker: BrokerConnection(url: "mqtt://127.0.0.1:1883"))
        configuration.source = .capture(path: capture)
        configuration.speed = .maximum
        configure(&configuration)
        let mqtt = try ScannerService.mqttConfiguration(for: configuration, boot: "b00t", startedAt: clock.now())
        client = try broker.client(configuration: mqtt)
        var logger = Logger(label: "test.scanner")
        logger.logLevel = .critical
        service = ScannerService(configuration: configuration, client: client, boot: "b00t", logger: logger, clock: clock)
    }

    /// Runs the scanner with the broker refusing connections until the replay has ended with everything queued and
    /// the scanner drains, checking every 20 ms of its clock (asserted); returns the running service.
    func runWithBrokerDown() async -> Task<Void, any Error> {
        broker.acceptsConnections = false
        let start = clock.now()
        let running = Task { try await service.run() }
        #expect(await clock.waitForSleeper(wakingAt: start + .milliseconds(20)))
        return running
    }

    func removeCapture() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    var batches: [SightingBatch] {
        get throws {
            try broker.publications(matching: Self.topics.sightings(Self.node)).map { try WireCodec.decodeSightingBatch($0.payload) }
        }
    }

    var statuses: [MQTTMessage] {
        get throws { try broker.publications(matching: Self.topics.nodeStatus(Self.node)) }
    }

    func states(_ messages: [MQTTMessage]) throws -> [LinkState] {
        try messages.map { try WireCodec.decodeNodeStatus($0.payload).state }
    }
}

@Suite("Scanner service, in memory", .timeLimit(.minutes(3)))
struct ScannerServiceTests {
    @Test("a replayed capture goes out as batches on the node's topic, seq 1, 2, 3…, every advert counted once, between online and offline")
    func replayPublishesBatches() async throws {
        let fixture = try ReplayFixture(adverts: 10_000)
        defer { fixture.removeCapture() }
        let start = fixture.clock.now()
        try await fixture.service.run()

        let batches = try fixture.batches
        #expect(batches.count > 10)
        #expect(batches.map(\.seq) == Array(1...UInt64(batches.count)))
        #expect(batches.allSatisfy { $0.node == ReplayFixture.node && $0.boot == "b00t" })
        #expect(batches.flatMap(\.sightings).reduce(0) { $0 + $1.count } == fixture.adverts)
        #expect(Set(batches.flatMap(\.sightings).map(\.beacon)).count == 10)
        // Times follow the capture (10 s from the scanner's start), not the wall clock.
        #expect(batches.map(\.sentAt) == batches.map(\.sentAt).sorted())
        #expect(batches.allSatisfy { $0.sentAt >= start && $0.sentAt <= start + .seconds(11) })
        let sent = try fixture.broker.publications(matching: ReplayFixture.topics.sightings(ReplayFixture.node))
        #expect(sent.allSatisfy { $0.qos == .atLeastOnce && !$0.retained })

        let statuses = try fixture.statuses
        #expect(try fixture.states(statuses) == [.online, .offline])
        #expect(statuses.allSatisfy { $0.retained })
        let retained = try #require(fixture.broker.retainedMessage(on: ReplayFixture.topics.nodeStatus(ReplayFixture.node)))
        #expect(try WireCodec.decodeNodeStatus(retained.payload).state == .offline)
        // online before the first batch, offline after the last.
        let order = fixture.broker.publications.map(\.topic)
        #expect(order.first == ReplayFixture.topics.nodeStatus(ReplayFixture.node))
        #expect(order.last == ReplayFixture.topics.nodeStatus(ReplayFixture.node))
        #expect(fixture.client.unacknowledgedCount == 0)
    }

    @Test("--qos 0 publishes the batches at QoS 0")
    func qosZero() async throws {
        let fixture = try ReplayFixture(adverts: 2_000) { $0.sightingsQoS = 0 }
        defer { fixture.removeCapture() }
        try await fixture.service.run()
        let sent = try fixture.broker.publications(matching: ReplayFixture.topics.sightings(ReplayFixture.node))
        #expect(!sent.isEmpty)
        #expect(sent.allSatisfy { $0.qos == .atMostOnce })
    }

    @Test("a lost connection publishes the offline will; the batches not acknowledged are sent again after online, none lost")
    func connectionLossKeepsBatches() async throws {
        let fixture = try ReplayFixture(adverts: 10_000)
        defer { fixture.removeCapture() }
        let sightings = ReplayFixture.topics.sightings(ReplayFixture.node)
        fixture.broker.holdsAcknowledgements = true
        let running = Task { try await fixture.service.run() }

        // The replay waits for acknowledgements once enough batches are in flight: take some, then cut the line.
        _ = try await fixture.broker.waitForPublications(matching: sightings, count: 5)
        fixture.client.simulateConnectionLoss()
        let afterLoss = try fixture.statuses
        #expect(try fixture.states(afterLoss) == [.online, .offline])
        let unacknowledged = fixture.client.unacknowledgedCount
        #expect(unacknowledged >= 5)

        fixture.broker.holdsAcknowledgements = false
        fixture.client.restoreConnection()
        // The acknowledgements of the batches sent again wake the scanner's loop: no tick (and no clock) needed.
        try await running.value

        let batches = try fixture.batches
        let sequences = batches.map(\.seq)
        let highest = try #require(sequences.max())
        #expect(Set(sequences) == Set(1...highest), "a batch was lost")
        var counted: [UInt64: Int] = [:]
        for batch in batches { counted[batch.seq] = batch.sightings.reduce(0) { $0 + $1.count } }
        #expect(counted.values.reduce(0, +) == fixture.adverts)
        var firstSeen: [UInt64] = []
        for seq in sequences where !firstSeen.contains(seq) { firstSeen.append(seq) }
        #expect(firstSeen == firstSeen.sorted(), "batches went out of order")
        #expect(try fixture.states(fixture.statuses) == [.online, .offline, .online, .offline])
        // The resent batches come after the new online status, not before it.
        let topics = fixture.broker.publications.map(\.topic)
        let status = ReplayFixture.topics.nodeStatus(ReplayFixture.node)
        let secondOnline = try #require(topics.indices.filter { topics[$0] == status }.dropFirst(2).first)
        #expect(topics[secondOnline - 1] == status, "a batch was sent between the will and the new online status")
        #expect(topics[secondOnline + 1] == sightings)
    }

    @Test("after a lost connection the scanner says online again, even with nothing left to resend")
    func onlineAgainAfterLoss() async throws {
        let fixture = try ReplayFixture(adverts: 1) { $0.source = .simulation }
        defer { fixture.removeCapture() }
        let status = ReplayFixture.topics.nodeStatus(ReplayFixture.node)
        let running = Task { try await fixture.service.run() }
        _ = try await fixture.broker.waitForPublications(matching: status, count: 1)
        #expect(fixture.client.unacknowledgedCount == 0)
        fixture.client.simulateConnectionLoss()
        fixture.client.restoreConnection()
        #expect(try fixture.states(fixture.statuses) == [.online, .offline, .online])
        running.cancel()
        try await running.value
        #expect(try fixture.states(fixture.statuses) == [.online, .offline, .online, .offline])
    }

    @Test("health goes out every healthInterval of the service's clock, with the uptime that clock says")
    func healthOnTheServiceClock() async throws {
        let fixture = try ReplayFixture(adverts: 1) {
            $0.source = .simulation
            $0.healthInterval = .seconds(10)
        }
        defer { fixture.removeCapture() }
        let health = ReplayFixture.topics.nodeHealth(ReplayFixture.node)
        let running = Task { try await fixture.service.run() }
        #expect(await fixture.clock.waitForSleepers(2))  // the ticker and the simulated shoppers
        fixture.clock.advance(by: .seconds(10))
        let first = try await fixture.broker.waitForPublications(matching: health, count: 1)
        #expect(try first.map { try WireCodec.decodeNodeHealth($0.payload).uptimeSeconds } == [10])
        #expect(first.allSatisfy { $0.qos == .atMostOnce && !$0.retained })
        running.cancel()
        try await running.value
    }

    @Test("a broker that is down at the start gets every batch once it is up, after the online status")
    func brokerDownAtStart() async throws {
        let fixture = try ReplayFixture(adverts: 3_000)
        defer { fixture.removeCapture() }
        let running = await fixture.runWithBrokerDown()
        #expect(fixture.broker.publications.isEmpty)
        fixture.broker.acceptsConnections = true
        fixture.clock.advance(by: .milliseconds(20))
        try await running.value

        let batches = try fixture.batches
        #expect(batches.map(\.seq) == Array(1...UInt64(batches.count)))
        #expect(batches.flatMap(\.sightings).reduce(0) { $0 + $1.count } == fixture.adverts)
        let first = try #require(fixture.broker.publications.first)
        #expect(first.topic == ReplayFixture.topics.nodeStatus(ReplayFixture.node))
        #expect(try fixture.states(fixture.statuses) == [.online, .offline])
    }

    @Test("a broker that never comes back: the scanner gives up after the drain timeout of its clock and says how many were lost")
    func drainTimeout() async throws {
        let fixture = try ReplayFixture(adverts: 3_000)
        defer { fixture.removeCapture() }
        let running = await fixture.runWithBrokerDown()
        fixture.clock.advance(by: ScannerService.drainTimeout)
        await #expect(throws: ScannerService.UndeliveredBatches.self) { try await running.value }
        #expect(fixture.broker.publications.isEmpty)
    }
}
