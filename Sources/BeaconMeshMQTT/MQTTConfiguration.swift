/// How an `MQTTClient` connects: broker, identity, credentials, TLS, keep-alive, last will and reconnect policy.
///
/// Every field has a default except the broker. `validate()` (also run by `MQTTClient.init`) rejects combinations that
/// cannot work, with a message naming the field. The password is passed in by the caller (read from a file or the
/// environment) and never printed: `description` masks it.
public struct MQTTConfiguration: Sendable, CustomStringConvertible {
    /// The broker to connect to (`mqtt://` plain, `mqtts://` TLS).
    public var broker: BrokerURL

    /// The MQTT client id. `nil` lets libmosquitto pick a random one, which only works with `cleanSession == true`.
    /// Persistent sessions (the coordinator) need a fixed id. Default `nil`.
    public var clientID: String?

    /// Whether the broker forgets our subscriptions and queued messages when we disconnect. Default `true`;
    /// the coordinator uses `false` with a fixed `clientID`, so QoS 1 messages sent while it was away are delivered later.
    public var cleanSession: Bool

    /// User name for the broker, or `nil` for anonymous access. Default `nil`.
    public var username: String?

    /// Password for `username`; never from a command line (callers read `--password-file` or `BEACONMESH_PASSWORD`).
    /// Requires `username`. Default `nil`.
    public var password: String?

    /// PEM file of the certificate authorities that sign the broker's certificate, for `mqtts://` only.
    /// `nil` trusts the operating system's store. Default `nil`.
    public var caFile: String?

    /// How often the client and broker exchange a ping when otherwise idle; the broker declares us gone (and
    /// publishes the last will) after 1.5 × this. Whole seconds, at least 5 (a libmosquitto limit). Default 30 s.
    public var keepAlive: Duration

    /// The message the broker publishes for us if we vanish without a clean disconnect. Default `nil` (none).
    public var lastWill: MQTTLastWill?

    /// The message published first thing on every accepted connection — the first and each reconnection — ahead
    /// of the QoS 1 messages queued while disconnected: typically a retained `online` status that answers the last
    /// will the broker published when the previous connection was lost. Default `nil` (none).
    public var announcement: MQTTMessage?

    /// First wait before reconnecting after a failed or lost connection. Whole seconds, at least 1. Default 1 s.
    public var reconnectDelayMin: Duration

    /// Longest wait between reconnect attempts; the wait grows from `reconnectDelayMin` towards this
    /// (min × attempt², as libmosquitto's own backoff). Whole seconds, at least `reconnectDelayMin`. Default 30 s.
    public var reconnectDelayMax: Duration

    /// The MQTT protocol version spoken. Default 3.1.1.
    public var protocolVersion: MQTTProtocolVersion

    /// How many received messages may wait for the consumer of `MQTTClient.messages`; beyond that, receiving pauses
    /// (the broker keeps the rest queued) until the consumer catches up. Nothing is dropped. Default 10 000.
    public var incomingBufferLimit: Int

    /// Whether every packet leaves at once (`TCP_NODELAY`). Default `true`: a packet written right after another
    /// otherwise waits for the broker's delayed ACK (up to 40 ms on Linux). A connection that mostly receives can turn
    /// it off, so that its acknowledgements (one per QoS 1 message) share TCP segments: under a heavy stream that
    /// saves a loopback transmission per message (the coordinator's sighting connection).
    public var sendsWithoutDelay: Bool

    /// A configuration with a default for every field but the broker.
    public init(
        broker: BrokerURL,
        clientID: String? = nil,
        cleanSession: Bool = true,
        username: String? = nil,
        password: String? = nil,
        caFile: String? = nil,
        keepAlive: Duration = .seconds(30),
        lastWill: MQTTLastWill? = nil,
        announcement: MQTTMessage? = nil,
        reconnectDelayMin: Duration = .seconds(1),
        reconnectDelayMax: Duration = .seconds(30),
        protocolVersion: MQTTProtocolVersion = .v3_1_1,
        incomingBufferLimit: Int = 10_000,
        sendsWithoutDelay: Bool = true
    ) {
        self.broker = broker
        self.clientID = clientID
        self.cleanSession = cleanSession
        self.username = username
        self.password = password
        self.caFile = caFile
        self.keepAlive = keepAlive
        self.lastWill = lastWill
        self.announcement = announcement
        self.reconnectDelayMin = reconnectDelayMin
        self.reconnectDelayMax = reconnectDelayMax
        self.protocolVersion = protocolVersion
        self.incomingBufferLimit = incomingBufferLimit
        self.sendsWithoutDelay = sendsWithoutDelay
    }

    /// Throws `MQTTError.invalidConfiguration` naming the first field that cannot work.
    public func validate() throws(MQTTError) {
        if let clientID {
            if clientID.isEmpty { throw .invalidConfiguration("the client id is empty (leave it unset for a random one)") }
            if clientID.utf8.count > 65535 { throw .invalidConfiguration("the client id is longer than 65535 bytes") }
        }
        if !cleanSession && clientID == nil {
            throw .invalidConfiguration("a persistent session (clean session off) needs a fixed client id")
        }
        if password != nil && username == nil {
            throw .invalidConfiguration("a password was given without a user name")
        }
        if caFile != nil && !broker.usesTLS {
            throw .invalidConfiguration("a CA file was given but \(broker) is not a TLS URL; use mqtts://")
        }
        if keepAlive.wholeSecondsRoundedUp < 5 || keepAlive.wholeSecondsRoundedUp > 65535 {
            throw .invalidConfiguration("keep-alive \(keepAlive) is outside 5 s…65535 s")
        }
        if reconnectDelayMin.wholeSecondsRoundedUp < 1 {
            throw .invalidConfiguration("the minimum reconnect delay \(reconnectDelayMin) is below 1 s")
        }
        if reconnectDelayMax.wholeSecondsRoundedUp < reconnectDelayMin.wholeSecondsRoundedUp {
            throw .invalidConfiguration(
                "the maximum reconnect delay \(reconnectDelayMax) is below the minimum \(reconnectDelayMin)")
        }
        if incomingBufferLimit < 1 {
            throw .invalidConfiguration("the incoming buffer limit must be at least 1 message")
        }
        if let lastWill {
            try MQTTTopicFilter.validatePublishTopic(lastWill.topic, what: "last will topic")
        }
        if let announcement {
            try MQTTTopicFilter.validatePublishTopic(announcement.topic, what: "announcement topic")
        }
    }

    /// All fields, with the password masked.
    public var description: String {
        var fields = [
            "broker: \(broker)", "cleanSession: \(cleanSession)", "keepAlive: \(keepAlive)",
            "reconnectDelay: \(reconnectDelayMin)…\(reconnectDelayMax)", "protocol: \(protocolVersion)",
        ]
        if let clientID { fields.append("clientID: \(clientID)") }
        if let username { fields.append("username: \(username)") }
        if password != nil { fields.append("password: ***") }
        if let caFile { fields.append("caFile: \(caFile)") }
        if let lastWill { fields.append("lastWill: \(lastWill.topic)") }
        if let announcement { fields.append("announcement: \(announcement.topic)") }
        return "MQTTConfiguration(" + fields.joined(separator: ", ") + ")"
    }
}

/// A last will: what the broker publishes on our behalf when we disappear without sending DISCONNECT.
public struct MQTTLastWill: Sendable, Hashable {
    /// Topic of the will (a concrete topic, no wildcards).
    public var topic: String
    /// Payload of the will, e.g. the node status `{"v":1,"state":"offline",…}`.
    public var payload: [UInt8]
    /// QoS of the will. Default at-least-once.
    public var qos: MQTTQoS
    /// Whether the broker keeps the will as the topic's retained message. Default `true` (status topics are retained).
    public var retain: Bool

    /// A will; QoS 1 and retained by default, as the contract's status topics want.
    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// The MQTT protocol version the client speaks.
public enum MQTTProtocolVersion: Sendable, Hashable, CustomStringConvertible {
    /// MQTT 3.1 (very old brokers only).
    case v3_1
    /// MQTT 3.1.1, the default.
    case v3_1_1

    public var description: String {
        switch self {
        case .v3_1: "3.1"
        case .v3_1_1: "3.1.1"
        }
    }
}

extension Duration {
    /// Whole seconds, rounding any fraction up (libmosquitto takes seconds as integers).
    var wholeSecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        return attoseconds > 0 ? seconds + 1 : seconds
    }
}
