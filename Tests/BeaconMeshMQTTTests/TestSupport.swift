import BeaconMeshMQTT
import BeaconMeshTesting
import Foundation
import Logging
import Synchronization
import Testing

/// Fast settings for tests: the smallest keep-alive libmosquitto allows and 1–2 s reconnect backoff.
func makeClient(
    _ url: String, clientID: String? = nil, cleanSession: Bool = true, lastWill: MQTTLastWill? = nil,
    configure: (inout MQTTConfiguration) -> Void = { _ in }
) throws -> MQTTClient {
    var configuration = MQTTConfiguration(
        broker: try BrokerURL(url), clientID: clientID, cleanSession: cleanSession, keepAlive: .seconds(5),
        lastWill: lastWill, reconnectDelayMin: .seconds(1), reconnectDelayMax: .seconds(2))
    configure(&configuration)
    var logger = Logger(label: "test.mqtt")
    // BEACONMESH_TEST_LOG=trace shows libmosquitto's protocol log when a test needs explaining.
    logger.logLevel = ProcessInfo.processInfo.environment["BEACONMESH_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .notice
    return try MQTTClient(configuration: configuration, logger: logger)
}

/// Starts `client`, and fails the test unless it connects within `timeout`.
func startAndConnect(_ client: MQTTClient, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async throws
{
    try client.start()
    let connected = await client.waitUntilConnected(timeout: timeout)
    try #require(connected, "client did not connect to \(client.configuration.broker)", sourceLocation: sourceLocation)
}

/// Subscribes and fails the test unless the broker acknowledges within `timeout`.
func subscribeAndWait(
    _ client: MQTTClient, _ filter: String, qos: MQTTQoS = .atLeastOnce, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    try client.subscribe(filter, qos: qos)
    let subscribed = await client.waitUntilSubscribed(filter, timeout: .seconds(10))
    try #require(subscribed, "no SUBACK for \(filter)", sourceLocation: sourceLocation)
}

/// Everything an `MQTTClient` receives, collected by a background task so tests can wait for a message.
final class Inbox: Sendable {
    private let store = MessageStore()
    private let task: Task<Void, Never>

    init(_ client: MQTTClient) {
        let store = self.store
        task = Task {
            for await message in client.messages {
                store.append(message)
            }
        }
    }

    deinit { task.cancel() }

    var messages: [MQTTMessage] { store.all }

    /// The first received message satisfying `predicate`, waiting up to `timeout`.
    func first(timeout: Duration = .seconds(10), where predicate: @Sendable (MQTTMessage) -> Bool) async -> MQTTMessage? {
        await eventually(timeout: timeout) { store.all.first(where: predicate) }
    }

    /// The first message on `topic`, waiting up to `timeout`.
    func first(topic: String, timeout: Duration = .seconds(10)) async -> MQTTMessage? {
        await first(timeout: timeout) { $0.topic == topic }
    }

    /// Waits until at least `count` messages satisfy `predicate`; returns them (possibly fewer after `timeout`).
    func collect(_ count: Int, timeout: Duration = .seconds(10), where predicate: @Sendable (MQTTMessage) -> Bool) async -> [MQTTMessage] {
        await eventually(timeout: timeout) { () -> [MQTTMessage]? in
            let matching = store.all.filter(predicate)
            return matching.count >= count ? matching : nil
        } ?? store.all.filter(predicate)
    }
}

private final class MessageStore: Sendable {
    private let messages = Mutex<[MQTTMessage]>([])
    func append(_ message: MQTTMessage) { messages.withLock { $0.append(message) } }
    var all: [MQTTMessage] { messages.withLock { $0 } }
}

/// Connection events of a client, collected in the background.
final class ConnectionLog: Sendable {
    private let box: EventBox
    private let task: Task<Void, Never>

    init(_ client: MQTTClient) {
        let stream = client.connectionEvents()
        let box = EventBox()
        self.box = box
        task = Task {
            for await event in stream { box.append(event) }
        }
    }

    deinit { task.cancel() }

    var all: [MQTTConnectionEvent] { box.all }

    /// The events once there are at least `count` of them (events reach the log a moment after `isConnected` changes).
    func events(atLeast count: Int, timeout: Duration = .seconds(5)) async -> [MQTTConnectionEvent] {
        _ = await eventually(timeout: timeout) { box.all.count >= count }
        return box.all
    }
}

private final class EventBox: Sendable {
    private let events = Mutex<[MQTTConnectionEvent]>([])
    func append(_ event: MQTTConnectionEvent) { events.withLock { $0.append(event) } }
    var all: [MQTTConnectionEvent] { events.withLock { $0 } }
}
