import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshTesting
import BeaconMeshWire
import Logging
import Testing

@testable import BeaconMeshPhone

/// The simulated phone through the in-memory broker, on a manual clock: its walk is timed by the test, no sleeps.
@Suite("Phone service, in memory", .timeLimit(.minutes(3)))
struct PhoneServiceTests {
    static let topics = Topics()

    @Test("a report a second on the clock, walking the route; one empty report on leaving, then silence; offers become lines")
    func walksOnTheClock() async throws {
        let broker = InMemoryBroker()
        let clock = ManualClock()
        var configuration = PhoneConfiguration(
            member: "ana", store: 1, walk: PhoneWalk(route: [10, 20], dwell: .seconds(2)),
            broker: BrokerConnection(url: "mqtt://127.0.0.1:1883"))
        configuration.clockOffset = .seconds(-3600)
        let client = try broker.client(configuration: try PhoneService.mqttConfiguration(for: configuration, session: "s1"))
        var logger = Logger(label: "test.phone")
        logger.logLevel = .critical
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        let phone = PhoneService(
            configuration: configuration, client: client, session: "s1", logger: logger, clock: clock, write: { line.yield($0) },
            warn: { line.yield("warning: " + $0) })
        let start = clock.now()
        let running = Task { try await phone.run() }
        let ranging = Self.topics.ranging(store: 1, member: "ana")
        func reports() throws -> [RangingReport] {
            try broker.publications(matching: ranging).map { try WireCodec.decodeRangingReport($0.payload) }
        }

        // Seconds 0 and 1 in department 10, 2 and 3 in department 20; at 4 the route is behind it.
        var departments: [UInt16?] = []
        for second in 0...5 {
            #expect(await clock.waitForSleeper(wakingAt: start + .seconds(second + 1)), "second \(second)")
            departments = try reports().map { $0.beacons.first?.department }
            clock.advance(by: .seconds(1))
        }
        #expect(await clock.waitForSleeper(wakingAt: start + .seconds(7)))
        let sent = try reports()
        #expect(departments == [10, 10, 20, 20, nil], "one empty report on leaving, then nothing")
        #expect(sent.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(sent.allSatisfy { $0.session == "s1" && $0.member == "ana" })
        #expect(sent.map(\.sentAt) == (0...4).map { start + .seconds($0) - .seconds(3600) }, "the phone's clock, an hour off")

        #expect(await broker.waitForSubscriber(to: Self.topics.offers(member: "ana")))
        let offer = Offer(
            id: "o1", member: "ana", store: 1, department: 20, departmentName: "Housewares",
            promo: Promo(id: "kitchen", title: "Kitchen", message: "20% off"), at: clock.now())
        try broker.publish(topic: Self.topics.offers(member: "ana"), payload: WireCodec.encode(offer))
        var received = lines.makeAsyncIterator()
        #expect(await received.next() == (try PhoneMessageLine.offer(WireCodec.encode(offer))))

        running.cancel()
        try await running.value
        #expect(try reports().count == 5, "out of the store already: no report on stopping")
        #expect(broker.connectedClientIDs.isEmpty)
    }
}
