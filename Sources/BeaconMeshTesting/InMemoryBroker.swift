import BeaconMeshMQTT
import Synchronization

/// An MQTT broker in memory, for service tests that run in milliseconds: clients made with `client(…)` publish and
/// subscribe through it synchronously, in one global order, with no sockets and no threads.
///
/// It keeps the broker's promises that services rely on: topic filters with `+` and `#` (matched by libmosquitto's own
/// `MQTTTopicFilter`); retained messages delivered (flagged `retained`) on every subscription; live messages delivered
/// unflagged, at the lower of the published and subscribed QoS, once per client even when several of its
/// subscriptions match; a client's last will published when its connection is lost (`simulateConnectionLoss()`), never
/// after a clean `disconnect`; persistent sessions (`cleanSession == false`) that queue QoS 1 messages while their
/// client is away. Acknowledgements are immediate, unless a test holds them (`holdsAcknowledgements`).
///
/// For the test's side: `publish(…)` as another client, `publications` (everything published, in order, wills and
/// final messages included), `retainedMessage(on:)` and `waitForPublications(matching:count:)`.
public final class InMemoryBroker: Sendable {
    let state = Mutex(InMemoryBrokerState())

    /// An empty broker that accepts connections.
    public init() {}

    /// A client of this broker with `configuration` (its broker URL is not used); throws what `MQTTClient` would for
    /// a configuration that cannot work.
    public func client(configuration: MQTTConfiguration) throws(MQTTError) -> InMemoryMQTTClient {
        try InMemoryMQTTClient(broker: self, configuration: configuration)
    }

    /// A client with the given identity, will and announcement (and the defaults of `MQTTConfiguration` otherwise).
    public func client(
        clientID: String? = nil, cleanSession: Bool = true, lastWill: MQTTLastWill? = nil, announcement: MQTTMessage? = nil
    ) throws(MQTTError) -> InMemoryMQTTClient {
        let url = try BrokerURL(scheme: .mqtt, host: "in-memory")
        return try client(
            configuration: MQTTConfiguration(
                broker: url, clientID: clientID, cleanSession: cleanSession, lastWill: lastWill, announcement: announcement))
    }

    // MARK: The test's side

    /// Publishes as a client of its own that is always connected (a phone, a coordinator, a till…).
    public func publish(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false) throws(MQTTError) {
        try MQTTTopicFilter.validatePublishTopic(topic)
        state.withLock { $0.route(MQTTMessage(topic: topic, payload: payload, qos: qos, retained: retain)) }
    }

    /// Publishes a UTF-8 string as a client of its own; see `publish(topic:payload:qos:retain:)`.
    public func publish(topic: String, string: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false) throws(MQTTError) {
        try publish(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    /// Every message published to this broker so far, in order, with the QoS and retain flag it was published with.
    public var publications: [MQTTMessage] {
        state.withLock { $0.publications }
    }

    /// The publications whose topic `filter` matches, in order.
    public func publications(matching filter: String) throws(MQTTError) -> [MQTTMessage] {
        let filter = try MQTTTopicFilter(filter)
        return state.withLock { $0.publications.filter { filter.matches(topic: $0.topic) } }
    }

    /// The message a new subscriber to `topic` would receive as retained, if any.
    public func retainedMessage(on topic: String) -> MQTTMessage? {
        state.withLock { $0.retained[topic] }
    }

    /// Waits until at least `count` publications match `filter` and returns all that match; returns those there are
    /// if `timeout` of real time passes first (a safety net for a failing test: a passing one never waits for it).
    public func waitForPublications(
        matching filter: String, count: Int, timeout: Duration = .seconds(30)
    ) async throws(MQTTError) -> [MQTTMessage] {
        let filter = try MQTTTopicFilter(filter)
        _ = await withRealTimeout(timeout, otherwise: false) { await self.publications(matching: filter, reaching: count) }
        return state.withLock { $0.publications.filter { filter.matches(topic: $0.topic) } }
    }

    /// Waits until a message published on `topic` would reach a connected client (the service under test has
    /// connected and subscribed); `false` if that does not happen within `timeout` of real time (a safety net for a
    /// failing test: a passing one never waits for it).
    @discardableResult
    public func waitForSubscriber(to topic: String, timeout: Duration = .seconds(30)) async -> Bool {
        await withRealTimeout(timeout, otherwise: false) { await self.subscriber(to: topic) }
    }

    private func subscriber(to topic: String) async -> Bool {
        let id = state.withLock { $0.takeID() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let result = state.withLock { state -> Bool? in
                    if state.hasSubscriber(for: topic) { return true }
                    if Task.isCancelled { return false }
                    state.subscriberWaiters[id] = (topic, continuation)
                    return nil
                }
                if let result { continuation.resume(returning: result) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.subscriberWaiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: false)
        }
    }

    private func publications(matching filter: MQTTTopicFilter, reaching count: Int) async -> Bool {
        let id = state.withLock { $0.takeID() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let result = state.withLock { state -> Bool? in
                    if state.publications.count(where: { filter.matches(topic: $0.topic) }) >= count { return true }
                    if Task.isCancelled { return false }
                    state.publicationWaiters[id] = .init(filter: filter, count: count, continuation: continuation)
                    return nil
                }
                if let result { continuation.resume(returning: result) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.publicationWaiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Whether clients may connect. Set it to `false` before starting a client to test a broker that is down (its
    /// QoS 1 messages wait in the client); setting it to `true` connects every started client whose connection is not
    /// being held down by `simulateConnectionLoss()`. Turning it off does not end existing connections.
    public var acceptsConnections: Bool {
        get { state.withLock { $0.acceptsConnections } }
        set { state.withLock { $0.setAcceptsConnections(newValue) } }
    }

    /// Whether the broker holds back its acknowledgements of QoS 1 messages (they are delivered, but their publishers
    /// keep waiting) until `releaseAcknowledgements()`: a slow broker. Held acknowledgements of a connection that is
    /// lost are never sent; its client sends those messages again after reconnecting, as MQTT's at-least-once does.
    public var holdsAcknowledgements: Bool {
        get { state.withLock { $0.holdsAcknowledgements } }
        set { state.withLock { $0.holdsAcknowledgements = newValue } }
    }

    /// Sends every held acknowledgement, in the order the messages arrived.
    public func releaseAcknowledgements() {
        state.withLock { $0.releaseAcknowledgements() }
    }

    /// The client ids connected now, sorted.
    public var connectedClientIDs: [String] {
        state.withLock { state in state.clients.values.filter(\.isConnected).map(\.clientID).sorted() }
    }
}
