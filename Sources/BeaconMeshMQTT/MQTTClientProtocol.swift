/// What a service needs from its broker connection: `MQTTClient` over the network, an in-memory client in tests
/// (`BeaconMeshTesting.InMemoryMQTTClient`), with the same guarantees as `MQTTClient` documents.
///
/// Life cycle: `start()` → use → `disconnect(timeout:finalMessage:)`. While connected, QoS 1 messages published while
/// disconnected go out after the next accepted connection, behind the configuration's announcement; subscriptions are
/// renewed after every reconnection; an unclean end of the connection makes the broker publish the last will.
public protocol MQTTClientProtocol: AnyObject, Sendable {
    /// The configuration the client was made with (identity, last will, announcement).
    var configuration: MQTTConfiguration { get }

    /// Every message received on any subscription, in arrival order. One consumer only; it ends after `disconnect`.
    var messages: MQTTMessages { get }

    /// Whether the broker has accepted our connection and it has not been lost since.
    var isConnected: Bool { get }

    /// How many QoS 1 messages are waiting for the broker's acknowledgement (including those queued while disconnected).
    var unacknowledgedCount: Int { get }

    /// Starts connecting and returns at once; the client then keeps (re)connecting until `disconnect`.
    /// Calling it again does nothing; throws `MQTTError.closed` after `disconnect`.
    func start() throws(MQTTError)

    /// A new stream of connection changes from now on (no replay of the current state); ends after `disconnect`.
    func connectionEvents() -> AsyncStream<MQTTConnectionEvent>

    /// Waits until the client is connected; `false` if `timeout` passes first or the client is disconnected.
    func waitUntilConnected(timeout: Duration) async -> Bool

    /// Publishes `payload` to `topic` and returns the id `acknowledgements()` will report.
    ///
    /// QoS 1 is kept until the broker acknowledges it, across reconnections; QoS 0 while disconnected throws
    /// `MQTTError.notConnected`. Throws `MQTTError.closed` after `disconnect`.
    @discardableResult
    func publish(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) throws(MQTTError) -> MQTTMessageID

    /// A new stream of the ids of published messages as the broker acknowledges them; ends after `disconnect`.
    /// An id can be acknowledged before `publish` has returned it: check `isAcknowledged(_:)` too.
    func acknowledgements() -> AsyncStream<MQTTMessageID>

    /// Whether the message with this id (returned by `publish`) is no longer waiting for the broker.
    func isAcknowledged(_ id: MQTTMessageID) -> Bool

    /// Subscribes to `filter` (wildcards `+` and `#`) now if connected and again after every reconnection.
    /// Throws for an invalid filter or after `disconnect`.
    func subscribe(_ filter: String, qos: MQTTQoS) throws(MQTTError)

    /// Stops receiving messages for `filter` (exactly as passed to `subscribe`) and forgets it for reconnections.
    func unsubscribe(_ filter: String) throws(MQTTError)

    /// Shuts down cleanly within about `timeout`: publishes `finalMessage` (if any), waits for QoS 1 messages to be
    /// acknowledged, then disconnects without the last will. Afterwards every stream ends and every method throws
    /// `MQTTError.closed`. Safe to call more than once. Returns what went wrong (a final message not published,
    /// messages lost), for the caller to log.
    @discardableResult
    func disconnect(timeout: Duration, finalMessage: MQTTMessage?) async -> [MQTTTrouble]
}

extension MQTTClientProtocol {
    /// Publishes a UTF-8 string; see `publish(topic:payload:qos:retain:)`.
    @discardableResult
    public func publish(
        topic: String, string: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false
    ) throws(MQTTError) -> MQTTMessageID {
        try publish(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    /// Subscribes at QoS 1; see `subscribe(_:qos:)`.
    public func subscribe(_ filter: String) throws(MQTTError) {
        try subscribe(filter, qos: .atLeastOnce)
    }

    /// Disconnects cleanly without a final message; see `disconnect(timeout:finalMessage:)`.
    @discardableResult
    public func disconnect(timeout: Duration = .seconds(5)) async -> [MQTTTrouble] {
        await disconnect(timeout: timeout, finalMessage: nil)
    }
}

extension MQTTClient: MQTTClientProtocol {}
