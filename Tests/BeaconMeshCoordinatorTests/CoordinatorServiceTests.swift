import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshTesting
import BeaconMeshWire
import Foundation
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// A coordinator service on an in-memory broker and a manual clock, with a registry in a temporary folder (and, with
/// a lease ttl, in-memory store leases on the same clock).
struct CoordinatorFixture {
    static let topics = Topics()
    static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
    static let anaFob = BeaconKey.iBeacon(uuid: uuid, major: 1, minor: 1)
    static let clothing = NodeAddress(store: 1, department: 10, node: "a")!

    let broker = InMemoryBroker()
    let clock = ManualClock()
    let registry: SQLiteRegistry
    let service: CoordinatorService
    let leases: InMemoryLeases?
    let folder: String

    init(anaVisits: Int = 0, firstVisitGreeting: String? = nil, leaseTTL: Duration? = nil, alerts: [AlertRule] = []) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-coordinator-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        registry = try SQLiteRegistry(path: folder + "/registry.sqlite")
        try registry.upsert(
            MemberRecord(
                profile: MemberProfile(id: "ana", name: "Ana", favoriteDrink: "flat white", visits: anaVisits),
                beacons: [Self.anaFob], createdAt: nil))
        var configuration = CoordinatorConfiguration(id: "hq")
        var store = CoordinatorConfiguration.Store(id: 1, name: "High Street")
        store.departments = [.init(id: 10, name: "Clothing", presence: PresenceRules())]
        store.firstVisitGreeting = firstVisitGreeting.map(GreetingTemplate.init)
        configuration.stores = [store]
        configuration.alerts = alerts
        leases = leaseTTL.map { [clock] _ in InMemoryLeases(clock: clock) }
        if let leaseTTL { configuration.lease.ttl = leaseTTL }
        let connections = try CoordinatorService.mqttConfigurations(for: configuration)
        var logger = Logger(label: "test.coordinator")
        logger.logLevel = .critical
        service = CoordinatorService(
            configuration: configuration, registry: registry, leases: leases,
            session: try broker.client(configuration: connections.session),
            publisher: try broker.client(configuration: connections.publisher), logger: logger, clock: clock)
    }

    /// Publishes a batch of the Clothing node with Ana's fob heard at the clock's time.
    func hearAna(seq: UInt64) throws {
        let now = clock.now()
        let sighting = Sighting(beacon: Self.anaFob, rssi: -55, count: 3, txPower: -59, distance: 0.8, proximity: .immediate, lastSeen: now)
        let batch = SightingBatch(node: Self.clothing, boot: "b", seq: seq, sentAt: now, sightings: [sighting])
        try broker.publish(topic: Self.topics.sightings(Self.clothing), payload: WireCodec.encode(batch))
    }

    /// The store's events so far, read back with json-c.
    func events(count: Int) async throws -> [StoreEvent] {
        try await broker.waitForPublications(matching: Self.topics.events(store: 1), count: count)
            .map { try WireCodec.decodeEvent($0.payload) }
    }

    /// Hears Ana in Clothing until her arrival has settled; returns the store's events then (node, arrived).
    func hearAnaUntilGreeted() async throws -> [MQTTMessage] {
        try hearAna(seq: 1)
        _ = try await broker.waitForPublications(matching: Self.topics.events(store: 1), count: 1)
        for seq in 2...4 {
            await advance(by: .milliseconds(400))
            try hearAna(seq: UInt64(seq))
        }
        return try await broker.waitForPublications(matching: Self.topics.events(store: 1), count: 2)
    }

    /// Moves the clock on by `duration` one tick at a time, letting the tick task wake up and sleep again each time.
    func advance(by duration: Duration) async {
        var passed = Duration.zero
        while passed < duration {
            let next = clock.now() + CoordinatorService.tickInterval
            _ = await clock.waitForSleeper(wakingAt: next)
            clock.advance(by: CoordinatorService.tickInterval)
            passed += CoordinatorService.tickInterval
        }
        _ = await clock.waitForSleeper(wakingAt: clock.now() + CoordinatorService.tickInterval)
    }

    func removeFolder() { try? FileManager.default.removeItem(atPath: folder) }
}

@Suite("Coordinator service, in memory", .timeLimit(.minutes(3)))
struct CoordinatorServiceTests {
    @Test(
        "a member's first visit gets the store's firstVisitGreeting, a later one its greeting; without one, the greeting",
        arguments: [
            (0, "Welcome, {name}!", 1, "Welcome, Ana!"), (4, "Welcome, {name}!", 5, "Welcome back, Ana! The usual flat white?"),
            (0, nil, 1, "Welcome back, Ana! The usual flat white?"),
        ] as [(Int, String?, Int, String)])
    func firstVisitGreeting(visitsBefore: Int, firstVisitGreeting: String?, visit: Int, expected: String) async throws {
        let fixture = try CoordinatorFixture(anaVisits: visitsBefore, firstVisitGreeting: firstVisitGreeting)
        defer { fixture.removeFolder() }
        let running = Task { try await fixture.service.run() }
        _ = try await fixture.broker.waitForPublications(matching: CoordinatorFixture.topics.coordinatorStatus(id: "hq"), count: 1)
        let events = try await fixture.hearAnaUntilGreeted().map { try WireCodec.decodeEvent($0.payload) }
        guard case .arrived(_, _, _, let number, let greeting, _) = try #require(events.last).kind else {
            Issue.record("no arrival: \(events.map(\.type))")
            return
        }
        #expect(number.number == visit)
        #expect(greeting == expected)
        running.cancel()
        _ = try? await running.value
    }

    @Test("a member heard through the broker is greeted once the arrival has settled, at the clock's time, and the visit is counted")
    func greetsOnTheClock() async throws {
        let fixture = try CoordinatorFixture()
        defer { fixture.removeFolder() }
        let started = fixture.clock.now()
        let running = Task { try await fixture.service.run() }
        let online = try await fixture.broker.waitForPublications(matching: CoordinatorFixture.topics.coordinatorStatus(id: "hq"), count: 1)
        #expect(try online.map { try WireCodec.decodeCoordinatorStatus($0.payload).state } == [.online])

        try fixture.hearAna(seq: 1)
        // The node's first batch announces it at once; Ana waits for the arrival to settle (1 s of ticks).
        let first = try await fixture.events(count: 1)
        #expect(first.map(\.type) == ["node"])
        for seq in 2...4 {
            await fixture.advance(by: .milliseconds(400))
            try fixture.hearAna(seq: UInt64(seq))
        }
        let events = try await fixture.events(count: 2)
        #expect(events.map(\.type) == ["node", "arrived"])
        let arrived = try #require(events.last)
        #expect(arrived.member?.name == "Ana")
        #expect(arrived.at >= started + .seconds(1) && arrived.at <= fixture.clock.now(), "\(arrived.at) on a clock started at \(started)")
        guard case .arrived(_, _, _, let visit, let greeting, _) = arrived.kind else {
            Issue.record("not an arrival: \(arrived.kind)")
            running.cancel()
            return
        }
        #expect(visit.number == 1)
        #expect(greeting.contains("Ana"))

        running.cancel()
        _ = await running.result
        // Stopping saves the open visit and the count, and leaves the retained status offline.
        let status = try #require(fixture.broker.retainedMessage(on: CoordinatorFixture.topics.coordinatorStatus(id: "hq")))
        #expect(try WireCodec.decodeCoordinatorStatus(status.payload).state == .offline)
        #expect(try fixture.registry.member(id: "ana")?.profile.visits == 1)
        #expect(try fixture.registry.loadVisits().contains { $0.member == "ana" && $0.leftAt == nil })
    }

    @Test("the arrival published says how sure the coordinator is (a confidence from 0 to 1) and why (a reason)")
    func arrivalSaysWhy() async throws {
        let fixture = try CoordinatorFixture()
        defer { fixture.removeFolder() }
        let running = Task { try await fixture.service.run() }
        defer { running.cancel() }
        _ = try await fixture.broker.waitForPublications(matching: CoordinatorFixture.topics.coordinatorStatus(id: "hq"), count: 1)
        let published = try #require(try await fixture.hearAnaUntilGreeted().last)
        let json = try WireCodec.parse(published.payload)
        #expect(json["type"] == .string("arrived"))
        let number: Double? =
            switch json["confidence"] {
            case .double(let value)?: value
            case .int(let value)?: Double(value)
            default: nil
            }
        guard let confidence = number else {
            Issue.record("no number confidence in \(String(decoding: published.payload, as: UTF8.self))")
            return
        }
        #expect((0...1).contains(confidence))
        guard case .string(let reason)? = json["reason"] else {
            Issue.record("no reason in \(String(decoding: published.payload, as: UTF8.self))")
            return
        }
        #expect(!reason.isEmpty)
        #expect(try WireCodec.decodeEvent(published.payload).evidence == DecisionEvidence(confidence: confidence, reason: reason))
    }

    @Test("a broken payload is counted by reason in the next health report and changes nothing else")
    func brokenPayload() async throws {
        let fixture = try CoordinatorFixture()
        defer { fixture.removeFolder() }
        let running = Task { try await fixture.service.run() }
        defer { running.cancel() }
        _ = try await fixture.broker.waitForPublications(matching: CoordinatorFixture.topics.coordinatorStatus(id: "hq"), count: 1)
        try fixture.broker.publish(topic: CoordinatorFixture.topics.sightings(CoordinatorFixture.clothing), string: "{\"v\":1,")
        try fixture.hearAna(seq: 1)
        _ = try await fixture.events(count: 1)
        await fixture.advance(by: .seconds(30))
        let reports = try await fixture.broker.waitForPublications(
            matching: CoordinatorFixture.topics.coordinatorHealth(id: "hq"), count: 1)
        let health = try WireCodec.decodeCoordinatorHealth(try #require(reports.last).payload)
        #expect(health.dropped.values.reduce(0, +) == 1)
        #expect(health.batches == 1)
        #expect(health.rssBytes > 0)
    }
}
