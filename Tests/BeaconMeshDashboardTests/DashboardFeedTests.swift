import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshTesting
import Logging
import Testing

@testable import BeaconMeshDashboard

/// The dashboard's broker side through the in-memory broker, on a manual clock: no sleeps, milliseconds a test.
@Suite("Dashboard feed, in memory", .timeLimit(.minutes(3)))
struct DashboardFeedTests {
    typealias F = BoardFixtures

    private struct Fixture {
        let broker = InMemoryBroker()
        let clock = ManualClock(now: F.at(seconds: 0))
        let client: InMemoryMQTTClient
        let hub = DashboardHub(board: ChainBoard(broker: "in-memory"))
        let feed: DashboardFeed

        init(stores: [UInt16] = []) throws {
            client = try broker.client(clientID: "dashboard")
            var logger = Logger(label: "test.dashboard")
            logger.logLevel = .critical
            feed = DashboardFeed(client: client, hub: hub, stores: stores, clock: clock, logger: logger)
        }

        /// Waits on the page's wake-ups (every change wakes a page; no sleeps) until `condition` holds of the board;
        /// `false` if the page's stream ends first.
        func wake(_ page: inout AsyncStream<Void>.Iterator, until condition: (borrowing ChainBoard) -> Bool) async -> Bool {
            while !hub.read(condition) {
                guard await page.next() != nil else { return false }
            }
            return true
        }

        /// Ends the feed as the broker's end of the connection would: the messages end, the feed closes the hub.
        func stop(_ running: Task<Void, any Error>) async throws {
            await client.disconnect()
            try await running.value
        }
    }

    @Test("a store's retained snapshot and its events reach the hub, and wake the store's page")
    func snapshotAndEvents() async throws {
        let fixture = try Fixture()
        let ana = F.member("ana", "Ana")
        try fixture.broker.publish(
            topic: F.topics.presence(store: 1), payload: F.snapshot(members: [(ana, 10, 0)], at: 0), retain: true)
        var page = fixture.hub.changes(of: .store(1)).makeAsyncIterator()
        #expect(await page.next() != nil, "the page's first wake-up")
        let running = Task { try await fixture.feed.run() }

        #expect(await fixture.wake(&page) { $0.board(of: 1).name == "San Francisco" }, "the retained snapshot never came")
        #expect(fixture.hub.read { $0.connection } == .connected)

        #expect(await fixture.broker.waitForSubscriber(to: F.topics.events(store: 2)))
        try fixture.broker.publish(topic: F.topics.events(store: 1), string: "not json")
        try fixture.broker.publish(
            topic: F.topics.events(store: 1), payload: F.event("e1", .left(member: ana, department: 10, dwellSeconds: 60), at: 1))
        #expect(await fixture.wake(&page) { $0.messagesReceived == 3 }, "the event never came")
        #expect(fixture.hub.read { $0.messagesDropped } == 1, "the message that is not JSON is dropped, and counted")
        try await fixture.stop(running)
        // Stopping the feed closes the hub: the page's stream ends (after the last wake-up it had waiting, if any).
        var wakeUps = 0
        while await page.next() != nil { wakeUps += 1 }
        #expect(wakeUps <= 1)
    }

    @Test("the pages are woken every heartbeat of the feed's clock, and a lost link is dated by it")
    func heartbeatAndLinkOnTheClock() async throws {
        let fixture = try Fixture(stores: [1])
        var page = fixture.hub.changes(of: .chain).makeAsyncIterator()
        #expect(await page.next() != nil)
        let start = fixture.clock.now()
        let running = Task { try await fixture.feed.run() }
        #expect(await fixture.clock.waitForSleeper(wakingAt: start + DashboardFeed.heartbeat))
        #expect(await fixture.broker.waitForSubscriber(to: F.topics.presence(store: 1)))

        // The heartbeat woke the pages and went back to sleep on the same clock, for the next one.
        fixture.clock.advance(by: DashboardFeed.heartbeat)
        #expect(await page.next() != nil, "no wake-up after \(DashboardFeed.heartbeat)")
        #expect(await fixture.clock.waitForSleeper(wakingAt: start + DashboardFeed.heartbeat * 2))

        fixture.clock.advance(by: .seconds(2))
        fixture.client.simulateConnectionLoss()
        #expect(await fixture.wake(&page) { $0.isLinkLost }, "the lost link never reached the hub")
        #expect(fixture.hub.read { $0.connection } == .lost(since: start + .seconds(7)))
        fixture.client.restoreConnection()
        #expect(await fixture.wake(&page) { !$0.isLinkLost })
        try await fixture.stop(running)
    }
}
