import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshTesting
import BeaconMeshWire
import Logging
import Testing

@testable import BeaconMeshMonitor

/// A plain monitor of store 1 running on an in-memory broker, on a manual clock, its lines in `lines`.
struct RunningPlainMonitor {
    let broker = InMemoryBroker()
    let client: any MQTTClientProtocol
    let lines: AsyncStream<String>
    let line: AsyncStream<String>.Continuation
    let running: Task<Void, any Error>

    init() throws {
        client = try broker.client(clientID: "monitor")
        var logger = Logger(label: "test.monitor")
        logger.logLevel = .critical
        (lines, line) = AsyncStream.makeStream(of: String.self)
        let monitor = PlainMonitor(store: 1, client: client, clock: ManualClock(now: StoreFixtures.t0), logger: logger) { [line] in
            line.yield($0)
        }
        running = Task { try await monitor.run() }
    }

    /// Disconnects the client and waits for the monitor to end.
    func stop() async throws {
        await client.disconnect()
        try await running.value
        line.finish()
    }
}

/// The line-per-event monitor through the in-memory broker, on a manual clock: no sleeps, milliseconds a test.
@Suite("Plain monitor, in memory", .timeLimit(.minutes(3)))
struct PlainMonitorServiceTests {
    typealias S = StoreFixtures

    @Test("each event of its store is one line, in order; a message it cannot read is skipped, and so is another store's")
    func eventsBecomeLines() async throws {
        let monitor = try RunningPlainMonitor()
        let broker = monitor.broker
        let topics = Topics()
        #expect(await broker.waitForSubscriber(to: topics.events(store: 1)))
        #expect(broker.connectedClientIDs == ["monitor"])

        let arrived = S.arrived(S.ana, id: "1", at: S.at(seconds: 1))
        let left = S.event("2", at: S.at(seconds: 60), .left(member: S.ana, department: 10, dwellSeconds: 59))
        try broker.publish(topic: topics.events(store: 1), payload: WireCodec.encode(arrived))
        try broker.publish(topic: topics.events(store: 1), string: "{not json")
        try broker.publish(topic: topics.events(store: 2), payload: WireCodec.encode(S.arrived(S.jose, id: "9", at: S.at(seconds: 2))))
        try broker.publish(topic: topics.events(store: 1), payload: WireCodec.encode(left))

        var received = monitor.lines.makeAsyncIterator()
        #expect(await received.next() == EventLine.format(arrived))
        #expect(await received.next() == EventLine.format(left))
        try await monitor.stop()
        #expect(await received.next() == nil, "a line for the message that is not JSON, or for store 2")
    }
}

@Suite("Plain monitor alerts, in memory", .timeLimit(.minutes(3)))
struct PlainMonitorAlertTests {
    typealias S = StoreFixtures

    @Test("an alert of its store is one line among the events, in order; an unreadable one is skipped")
    func alertsBecomeLines() async throws {
        let monitor = try RunningPlainMonitor()
        let broker = monitor.broker
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
        var received = monitor.lines.makeAsyncIterator()
        #expect(await received.next() == EventLine.format(arrived))
        let alertLine = await received.next()
        #expect(alertLine == EventLine.format(alert))
        #expect(
            alertLine?.hasSuffix("  ALERT    Ana Souza (tier vip) arrived in Clothing  [vip-arrived]") == true,
            "\(String(describing: alertLine))")
        try await monitor.stop()
    }
}
