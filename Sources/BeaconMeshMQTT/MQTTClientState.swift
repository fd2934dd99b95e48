/// Everything an `MQTTClient` and its libmosquitto callbacks share; lives inside a `Mutex` in `MQTTCallbackContext`.
///
/// Continuations are stored here but yielded to *outside* the lock, because finishing a stream runs its
/// `onTermination`, which takes the lock again.
struct MQTTClientState {
    /// Where the client is in its one-way life: created → started → closing → closed.
    enum Lifecycle: Equatable {
        case created, started, closing, closed

        /// Whether `publish`, `subscribe` and `start` are still allowed.
        var acceptsWork: Bool { self == .created || self == .started }
    }

    /// A subscription the client re-establishes after every (re)connect.
    struct Subscription: Equatable {
        var filter: String
        var qos: MQTTQoS
    }

    var lifecycle = Lifecycle.created
    var isConnected = false
    var sessionPresent = false

    /// Subscriptions in the order they were made; one entry per filter.
    var subscriptions: [Subscription] = []

    /// Filters the broker has acknowledged (SUBACK) on the current connection.
    var acknowledgedSubscriptions: Set<String> = []
    /// SUBSCRIBE message ids waiting for their SUBACK, and the filter each one is for.
    var pendingSubscribes: [Int32: String] = [:]
    /// SUBACKs that arrived before `subscribe()` had recorded the id: id → granted QoS.
    var subacksBeforeRecorded: [Int32: Int32] = [:]

    /// Published messages whose `on_publish` has not come yet (QoS 1: no PUBACK yet; QoS 0: not yet written).
    var unacknowledged: [MQTTMessageID: MQTTQoS] = [:]
    /// `on_publish` can arrive before `mosquitto_publish` has returned the id to us; such ids wait here.
    var acknowledgedBeforeRecorded: Set<MQTTMessageID> = []

    var nextObserverID = 0
    var connectionObservers: [Int: AsyncStream<MQTTConnectionEvent>.Continuation] = [:]
    var acknowledgementObservers: [Int: AsyncStream<MQTTMessageID>.Continuation] = [:]
    /// Internal waiters (`waitUntil`): poked on every change of the state above.
    var changeObservers: [Int: AsyncStream<Void>.Continuation] = [:]

    /// Number of QoS 1 and 2 messages still waiting for the broker's acknowledgement.
    var unacknowledgedAtLeastOnce: Int {
        unacknowledged.values.count(where: { $0 != .atMostOnce })
    }

    /// Remembers a subscription (replacing the QoS of an existing one for the same filter).
    mutating func remember(_ subscription: Subscription) {
        if let index = subscriptions.firstIndex(where: { $0.filter == subscription.filter }) {
            subscriptions[index] = subscription
        } else {
            subscriptions.append(subscription)
        }
    }

    mutating func makeObserverID() -> Int {
        nextObserverID += 1
        return nextObserverID
    }
}
