/// MQTT quality of service: how hard the broker and client try to deliver a message.
public enum MQTTQoS: Int32, Sendable, Hashable, CaseIterable {
    /// Sent once; lost if the connection is down.
    case atMostOnce = 0
    /// Repeated until acknowledged (PUBACK); may arrive twice.
    case atLeastOnce = 1
    /// Delivered exactly once (four-way handshake). BeaconMesh does not publish with it, but may receive it.
    case exactlyOnce = 2
}

/// A message received from the broker: topic, payload bytes (copied out of libmosquitto), QoS and retained flag.
public struct MQTTMessage: Sendable, Hashable {
    /// The concrete topic the message was published to (never a filter).
    public var topic: String
    /// The payload bytes, exactly as published (may be empty, may be binary).
    public var payload: [UInt8]
    /// The QoS the message was delivered with (the lower of the publish and the subscription QoS).
    public var qos: MQTTQoS
    /// Whether the broker delivered it from its retained store (a message published before we subscribed).
    public var retained: Bool
    /// When the network thread received it (for latency measurements); `nil` for messages made by hand.
    /// Not part of equality: two deliveries of the same message are equal.
    public var receivedAt: ContinuousClock.Instant?

    /// A message value; mostly for tests — clients receive them from `MQTTClient.messages`.
    public init(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retained: Bool = false,
        receivedAt: ContinuousClock.Instant? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retained = retained
        self.receivedAt = receivedAt
    }

    public static func == (lhs: MQTTMessage, rhs: MQTTMessage) -> Bool {
        lhs.topic == rhs.topic && lhs.payload == rhs.payload && lhs.qos == rhs.qos && lhs.retained == rhs.retained
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(topic)
        hasher.combine(payload)
        hasher.combine(qos)
        hasher.combine(retained)
    }

    /// The payload decoded as UTF-8 (invalid bytes become U+FFFD).
    public var payloadString: String { String(decoding: payload, as: UTF8.self) }
}

/// The identifier libmosquitto gives an outgoing message; `MQTTClient` reports it again when the message is acknowledged.
///
/// Identifiers are reused (they wrap around at 65535), so hold on to one only until it is acknowledged.
public struct MQTTMessageID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public var description: String { "mid \(rawValue)" }
}

/// A change of the connection to the broker, as seen by `MQTTClient.connectionEvents()`.
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// The broker accepted the connection; `sessionPresent` says it still had our persistent session (subscriptions, queued messages).
    case connected(sessionPresent: Bool)
    /// The connection ended or could not be established; the client keeps retrying unless the reason is `.requested`.
    case disconnected(MQTTDisconnectReason)
    /// Something went wrong that the client got over or keeps retrying; the caller logs it.
    case trouble(MQTTTrouble)
}

/// Why the client is not connected.
public enum MQTTDisconnectReason: Sendable, Hashable, CustomStringConvertible {
    /// We asked for it (`disconnect`): no last will is published.
    case requested
    /// The connection broke (broker stopped, network lost, keep-alive timed out): the broker publishes our last will.
    case connectionLost(String)
    /// The broker answered the connection attempt with a refusal (bad credentials, not authorised, …).
    case refused(String)

    public var description: String {
        switch self {
        case .requested: "disconnected on request"
        case .connectionLost(let reason): "connection lost: \(reason)"
        case .refused(let reason): "broker refused the connection: \(reason)"
        }
    }
}
