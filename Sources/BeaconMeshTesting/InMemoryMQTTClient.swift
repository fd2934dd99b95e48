import BeaconMeshMQTT
import Synchronization

/// A client of an `InMemoryBroker`, for fast service tests: the same contract as `MQTTClient` (`MQTTClientProtocol`),
/// without a network. Everything it does takes effect before the call returns.
///
/// Unlike `MQTTClient`, it never reconnects by itself: a test ends the connection with `simulateConnectionLoss()` (the
/// broker publishes the will) and brings it back with `restoreConnection()`, so every step is the test's decision.
public final class InMemoryMQTTClient: MQTTClientProtocol {
    public let configuration: MQTTConfiguration
    public let messages: MQTTMessages
    /// The broker this client talks to.
    public let broker: InMemoryBroker
    private let number: Int

    /// A client of `broker`; throws `MQTTError` for a configuration `MQTTClient` would reject too.
    public init(broker: InMemoryBroker, configuration: MQTTConfiguration) throws(MQTTError) {
        try configuration.validate()
        let (messages, feed) = MQTTMessageFeed.makeMessages()
        self.configuration = configuration
        self.messages = messages
        self.broker = broker
        self.number = broker.state.withLock { state in
            let number = state.takeID()
            let clientID = configuration.clientID ?? "in-memory-\(number)"
            state.clients[number] = .init(clientID: clientID, configuration: configuration, feed: feed)
            return number
        }
    }

    /// The client id: the configuration's, or one the broker made up.
    public var clientID: String {
        broker.state.withLock { $0.clients[number]?.clientID ?? "" }
    }

    public var isConnected: Bool {
        broker.state.withLock { $0.clients[number]?.isConnected ?? false }
    }

    public var unacknowledgedCount: Int {
        broker.state.withLock { $0.clients[number]?.outbox.count ?? 0 }
    }

    public func start() throws(MQTTError) {
        try broker.state.withLock { state throws(MQTTError) in try state.start(number) }
    }

    public func connectionEvents() -> AsyncStream<MQTTConnectionEvent> {
        observerStream(\.connectionObservers, bufferingNewest: 64)
    }

    public func acknowledgements() -> AsyncStream<MQTTMessageID> {
        observerStream(\.acknowledgementObservers, bufferingNewest: 4096)
    }

    /// A stream registered in the client's `observers` until its consumer is cancelled; finished if the client is closed.
    private func observerStream<Element>(
        _ observers: any WritableKeyPath<InMemoryBrokerState.Client, [Int: AsyncStream<Element>.Continuation]> & Sendable,
        bufferingNewest limit: Int
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(limit))
        let number = self.number
        let id = broker.state.withLock { state -> Int? in
            guard state.clients[number]?.lifecycle != .closed else { return nil }
            let id = state.takeID()
            state.clients[number]?[keyPath: observers][id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [broker] _ in
            broker.state.withLock { _ = $0.clients[number]?[keyPath: observers].removeValue(forKey: id) }
        }
        return stream
    }

    public func waitUntilConnected(timeout: Duration) async -> Bool {
        await withRealTimeout(timeout, otherwise: false) { await self.connected() }
    }

    /// `true` once connected; `false` once closed or if the waiting task is cancelled.
    private func connected() async -> Bool {
        let number = self.number
        let id = broker.state.withLock { $0.takeID() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let result = broker.state.withLock { state -> Bool? in
                    guard let client = state.clients[number], client.lifecycle != .closed else { return false }
                    if client.isConnected { return true }
                    if Task.isCancelled { return false }
                    state.clients[number]?.connectionWaiters[id] = continuation
                    return nil
                }
                if let result { continuation.resume(returning: result) }
            }
        } onCancel: {
            let waiter = broker.state.withLock { $0.clients[number]?.connectionWaiters.removeValue(forKey: id) }
            waiter?.resume(returning: false)
        }
    }

    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) throws(MQTTError) -> MQTTMessageID {
        try MQTTTopicFilter.validatePublishTopic(topic)
        let message = MQTTMessage(topic: topic, payload: payload, qos: qos, retained: retain)
        return try broker.state.withLock { state throws(MQTTError) in try state.publish(message, from: number) }
    }

    public func isAcknowledged(_ id: MQTTMessageID) -> Bool {
        broker.state.withLock { state in !(state.clients[number]?.outbox.contains { $0.id == id } ?? false) }
    }

    public func subscribe(_ filter: String, qos: MQTTQoS) throws(MQTTError) {
        let filter = try MQTTTopicFilter(filter)
        try broker.state.withLock { state throws(MQTTError) in try state.subscribe(filter, qos: qos, for: number) }
    }

    public func unsubscribe(_ filter: String) throws(MQTTError) {
        try broker.state.withLock { state throws(MQTTError) in try state.unsubscribe(filter, for: number) }
    }

    /// Publishes `finalMessage` if connected, then ends the connection cleanly (no will) at once: the in-memory broker
    /// acknowledges as it receives, so there is nothing to wait for (messages it holds back are lost).
    @discardableResult
    public func disconnect(timeout: Duration, finalMessage: MQTTMessage?) async -> [MQTTTrouble] {
        broker.state.withLock { $0.disconnect(number, finalMessage: finalMessage) }.finish()
        return []
    }

    // MARK: The test's side

    /// Ends the connection as a crash or a pulled cable would: the broker publishes the last will, the client reports
    /// `.connectionLost` and keeps its QoS 1 messages (also those published from now on) until `restoreConnection()`.
    public func simulateConnectionLoss() {
        broker.state.withLock { state in
            state.clients[number]?.linkDown = true
            state.loseConnection(of: number, reason: "simulated connection loss")
        }
    }

    /// Lets the client connect again (at once, if it is started and the broker accepts connections).
    public func restoreConnection() {
        broker.state.withLock { state in
            state.clients[number]?.linkDown = false
            state.connect(number)
        }
    }
}
