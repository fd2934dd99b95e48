import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshTesting
import BeaconMeshWire
import Logging
import Testing

@testable import BeaconMeshMonitor

/// The line-per-event monitor through the in-memory broker, on a manual clock: no sleeps, milliseconds a test.
@Suite("Plain monitor, in memory", .timeLimit(.minutes(3)))
struct PlainMonitorServiceTests {
    typealias S = StoreFixtures

    @Test("each event of its store is one line, in order; a message it cannot read is skipped, and so is another store's")
    func eventsBecomeLines() async throws {
        let broker = InMemoryBroker()
        let clock = ManualClock(now: S.t0)
        let client = try broker.client(clientID: "monitor")
        var logger = Logger(label: "test.monitor")
        logger.logLevel = .critical
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        let monitor = PlainMonitor(store: 1, client: client, clock: clock, logger: logger) { line.yield($0) }
        let running = Task { try await monitor.run() }
        let topics = Topics()
        #expect(await broker.waitForSubscriber(to: topics.events(store: 1)))
        #expect(broker.connectedClientIDs == ["monitor"])

        let arrived = S.arrived(S.ana, id: "1", at: S.at(seconds: 1))
        let left = S.event("2", at: S.at(seconds: 60), .left(member: S.ana, department: 10, dwellSeconds: 59))
        try broker.publish(topic: topics.events(store: 1), payload: WireCodec.encode(arrived))
        try broker.publish(topic: topics.events(store: 1), string: "{not json")
        try broker.publish(topic: topics.events(store: 2), payload: WireCodec.encode(S.arrived(S.jose, id: "9", at: S.at(seconds: 2))))
        try broker.publish(topic: topics.events(store: 1), payload: WireCodec.encode(left))

        var received = lines.makeAsyncIterator()
        #expect(await received.next() == EventLine.format(arrived))
        #expect(await received.next() == EventLine.format(left))
        await client.disconnect()
        try await running.value
        line.finish()
        #expect(await received.next() == nil, "a line for the message that is not JSON, or for store 2")
    }
}

@Suite("Plain monitor alerts, in memory", .timeLimit(.minutes(3)))
struct PlainMonitorAlertTests {
    typealias S = StoreFixtures

    @Test("an alert of its store is one line among the events, in order; an unreadable one is skipped")
    func alertsBecomeLines() async throws {
        let broker = InMemoryBroker()
        let client = try broker.client(clientID: "monitor")
        var logger = Logger(label: "test.monitor")
        logger.logLevel = .critical
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        let monitor = PlainMonitor(store: 1, client: client, clock: ManualClock(now: S.t0), logger: logger) { line.yield($0) }
        let running = Task { try await monitor.run() }
        let topics = Topics()
        #expect(await broker.waitForSubscriber(to: topics.alerts(store: 1)))
        let arrived = S.arrived(S.ana, id: "1", at: S.at(seconds: 1))
        var alert = Alert(
            rule: "vip-arrived", kind: .memberArrived, store: 1, at: S.at(seconds: 1), department: 10, departmentName: "Clothing",
            member: S.ana, text: "Ana Souza (tier vip) arrived in Clothing")
        alert.id = "a-1"
        try broker.publish(topic: topics.events(store: 1), payload: WireCodec.encode(arrived))
        try broker.publish(topic: topics.alerts(store: 1), string: #"{"v":1,"kind":"meteor"}"#)
        try broker.publish(topic: topics.alerts(store: 1), payload: WireCodec.encode(alert))
        var received = lines.makeAsyncIterator()
        #expect(await received.next() == EventLine.format(arrived))
        let alertLine = await received.next()
        #expect(alertLine == EventLine.format(alert))
        #expect(
            alertLine?.hasSuffix("  ALERT    Ana Souza (tier vip) arrived in Clothing  [vip-arrived]") == true,
            "\(String(describing: alertLine))")
        await client.disconnect()
        try await running.value
    }
}
