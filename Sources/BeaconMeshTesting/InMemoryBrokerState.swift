import BeaconMeshMQTT

/// Everything an `InMemoryBroker` and its clients know, under the broker's one lock: retained messages, sessions,
/// each client's connection and outbox, and the log of publications. Every change happens in one step, so the
/// order of deliveries is the order of publications.
struct InMemoryBrokerState {
    /// A broker-side session: what survives a client's disconnection when it asked for a persistent one.
    struct Session {
        var subscriptions: [(filter: MQTTTopicFilter, qos: MQTTQoS)] = []
        /// QoS 1 messages that arrived while the persistent session's client was away.
        var queued: [MQTTMessage] = []
        /// The client connected to this session now, if any.
        var connectedClient: Int?
    }

    /// A client's side: its life cycle, connection and the QoS 1 messages it has not had acknowledged.
    struct Client {
        enum Lifecycle { case created, started, closed }
        struct Outgoing {
            var id: MQTTMessageID
            var message: MQTTMessage
            /// Whether it reached the broker on the current connection (else it goes out after the next one).
            var sent: Bool
        }

        let clientID: String
        let configuration: MQTTConfiguration
        let feed: MQTTMessageFeed
        var lifecycle = Lifecycle.created
        var isConnected = false
        /// Held down by `simulateConnectionLoss()` until `restoreConnection()`.
        var linkDown = false
        var subscriptions: [(filter: MQTTTopicFilter, qos: MQTTQoS)] = []
        /// QoS 1 messages not yet acknowledged, in publish order.
        var outbox: [Outgoing] = []
        var nextMessageID: Int32 = 0
        var connectionObservers: [Int: AsyncStream<MQTTConnectionEvent>.Continuation] = [:]
        var acknowledgementObservers: [Int: AsyncStream<MQTTMessageID>.Continuation] = [:]
        var connectionWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]

        mutating func takeMessageID() -> MQTTMessageID {
            nextMessageID = nextMessageID % 65535 + 1
            return MQTTMessageID(rawValue: nextMessageID)
        }

        func notify(_ event: MQTTConnectionEvent) {
            for observer in connectionObservers.values { observer.yield(event) }
        }

        func acknowledge(_ id: MQTTMessageID) {
            for observer in acknowledgementObservers.values { observer.yield(id) }
        }
    }

    struct PublicationWaiter {
        var filter: MQTTTopicFilter
        var count: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    var retained: [String: MQTTMessage] = [:]
    /// Topics of `retained` in the order they were first retained: the order they are delivered on subscribing.
    var retainedOrder: [String] = []
    var sessions: [String: Session] = [:]
    var clients: [Int: Client] = [:]
    var publications: [MQTTMessage] = []
    var publicationWaiters: [Int: PublicationWaiter] = [:]
    /// Tests waiting for a connected client to subscribe to a topic: the topic, and whom to wake.
    var subscriberWaiters: [Int: (topic: String, continuation: CheckedContinuation<Bool, Never>)] = [:]
    var acceptsConnections = true
    var holdsAcknowledgements = false
    /// Acknowledgements held back, in arrival order: the client and the message id.
    var heldAcknowledgements: [(client: Int, id: MQTTMessageID)] = []
    var nextID = 0

    mutating func takeID() -> Int {
        nextID += 1
        return nextID
    }

    // MARK: Routing

    /// Takes in one publication: logs it, updates the retained store and delivers it to every matching session.
    mutating func route(_ message: MQTTMessage) {
        publications.append(message)
        if message.retained {
            if message.payload.isEmpty {
                retained[message.topic] = nil
                retainedOrder.removeAll { $0 == message.topic }
            } else {
                if retained[message.topic] == nil { retainedOrder.append(message.topic) }
                retained[message.topic] = message
            }
        }
        // Queued after the walk over the sessions: changing a session while walking them would copy them all.
        var queueing: [(clientID: String, delivery: MQTTMessage)] = []
        for (clientID, session) in sessions {
            let matching = session.subscriptions.filter { $0.filter.matches(topic: message.topic) }
            guard let granted = matching.map(\.qos.rawValue).max() else { continue }
            let qos = MQTTQoS(rawValue: min(granted, message.qos.rawValue)) ?? .atMostOnce
            let delivery = MQTTMessage(topic: message.topic, payload: message.payload, qos: qos, retained: false)
            if let number = session.connectedClient, let client = clients[number], client.isConnected {
                client.feed.yield(delivery)
            } else if qos != .atMostOnce {
                queueing.append((clientID, delivery))
            }
        }
        for (clientID, delivery) in queueing { sessions[clientID]?.queued.append(delivery) }
        let satisfied = publicationWaiters.filter { _, waiter in
            publications.count(where: { waiter.filter.matches(topic: $0.topic) }) >= waiter.count
        }
        for (id, waiter) in satisfied {
            publicationWaiters[id] = nil
            waiter.continuation.resume(returning: true)
        }
    }

    /// Delivers the retained messages `filter` matches to a client that has just subscribed.
    func deliverRetained(matching filter: MQTTTopicFilter, qos: MQTTQoS, to client: Client) {
        for topic in retainedOrder where filter.matches(topic: topic) {
            guard let message = retained[topic] else { continue }
            let delivered = MQTTQoS(rawValue: min(qos.rawValue, message.qos.rawValue)) ?? .atMostOnce
            client.feed.yield(MQTTMessage(topic: topic, payload: message.payload, qos: delivered, retained: true))
        }
    }

    // MARK: A client's requests

    /// Publishes for client `number`: QoS 1 joins its outbox (sent now if connected); QoS 0 needs a connection.
    mutating func publish(_ message: MQTTMessage, from number: Int) throws(MQTTError) -> MQTTMessageID {
        guard var client = clients[number], client.lifecycle != .closed else { throw .closed }
        let id = client.takeMessageID()
        if message.qos == .atMostOnce {
            guard client.isConnected else {
                clients[number] = client
                throw .notConnected(topic: message.topic)
            }
            clients[number] = client
            route(message)
            client.acknowledge(id)
            return id
        }
        client.outbox.append(.init(id: id, message: message, sent: false))
        clients[number] = client
        if client.isConnected { sendOutbox(of: number) }
        return id
    }

    /// Sends client `number`'s unsent outbox messages in order and acknowledges them (unless acknowledgements are held).
    mutating func sendOutbox(of number: Int) {
        guard let client = clients[number], client.isConnected else { return }
        for index in client.outbox.indices where !client.outbox[index].sent {
            clients[number]?.outbox[index].sent = true
            route(client.outbox[index].message)
        }
        if holdsAcknowledgements {
            for outgoing in client.outbox where !outgoing.sent {
                heldAcknowledgements.append((number, outgoing.id))
            }
        } else {
            acknowledgeSent(of: number)
        }
    }

    /// Acknowledges every message of client `number` that reached the broker.
    private mutating func acknowledgeSent(of number: Int) {
        guard let client = clients[number] else { return }
        let sent = client.outbox.filter(\.sent)
        clients[number]?.outbox.removeAll(where: \.sent)
        for outgoing in sent { client.acknowledge(outgoing.id) }
    }

    mutating func releaseAcknowledgements() {
        let held = heldAcknowledgements
        heldAcknowledgements = []
        for (number, id) in held {
            guard let client = clients[number], let index = client.outbox.firstIndex(where: { $0.id == id && $0.sent })
            else { continue }
            clients[number]?.outbox.remove(at: index)
            client.acknowledge(id)
        }
    }

    mutating func subscribe(_ filter: MQTTTopicFilter, qos: MQTTQoS, for number: Int) throws(MQTTError) {
        guard var client = clients[number], client.lifecycle != .closed else { throw .closed }
        client.subscriptions.removeAll { $0.filter == filter }
        client.subscriptions.append((filter, qos))
        clients[number] = client
        guard client.isConnected else { return }
        addToSession(filter, qos: qos, of: client)
        deliverRetained(matching: filter, qos: qos, to: client)
    }

    private mutating func addToSession(_ filter: MQTTTopicFilter, qos: MQTTQoS, of client: Client) {
        sessions[client.clientID, default: Session()].subscriptions.removeAll { $0.filter == filter }
        sessions[client.clientID, default: Session()].subscriptions.append((filter, qos))
        let satisfied = subscriberWaiters.filter { hasSubscriber(for: $0.value.topic) }
        for (id, waiter) in satisfied {
            subscriberWaiters[id] = nil
            waiter.continuation.resume(returning: true)
        }
    }

    /// Whether a message published on `topic` now would reach a connected client (a subscription of its session
    /// matches the topic).
    func hasSubscriber(for topic: String) -> Bool {
        sessions.values.contains { session in
            guard let number = session.connectedClient, clients[number]?.isConnected == true else { return false }
            return session.subscriptions.contains { $0.filter.matches(topic: topic) }
        }
    }

    mutating func unsubscribe(_ filter: String, for number: Int) throws(MQTTError) {
        guard let client = clients[number], client.lifecycle != .closed else { throw .closed }
        clients[number]?.subscriptions.removeAll { $0.filter.filter == filter }
        if client.isConnected {
            sessions[client.clientID]?.subscriptions.removeAll { $0.filter.filter == filter }
        }
    }

    // MARK: Connections

    mutating func start(_ number: Int) throws(MQTTError) {
        guard let client = clients[number] else { throw .closed }
        switch client.lifecycle {
        case .closed: throw .closed
        case .started: return
        case .created: clients[number]?.lifecycle = .started
        }
        connect(number)
    }

    /// Connects client `number` if it is started, its link is up and the broker accepts connections: takes over its
    /// session (a client already connected with the same id loses its connection, and its will is published), then
    /// the announcement, the subscriptions with their retained messages, the session's queue and the client's outbox.
    mutating func connect(_ number: Int) {
        guard acceptsConnections, let client = clients[number], client.lifecycle == .started, !client.isConnected,
            !client.linkDown
        else { return }
        if let other = sessions[client.clientID]?.connectedClient, other != number {
            loseConnection(of: other, reason: "another client connected with the same client id")
        }
        let sessionPresent = !client.configuration.cleanSession && sessions[client.clientID] != nil
        if !sessionPresent { sessions[client.clientID] = Session() }
        sessions[client.clientID]?.connectedClient = number
        clients[number]?.isConnected = true

        if let announcement = client.configuration.announcement {
            route(announcement)
            if announcement.qos != .atMostOnce { client.acknowledge(clients[number]!.takeMessageID()) }
        }
        for subscription in client.subscriptions {
            addToSession(subscription.filter, qos: subscription.qos, of: client)
            deliverRetained(matching: subscription.filter, qos: subscription.qos, to: client)
        }
        if sessionPresent {
            let queued = sessions[client.clientID]?.queued ?? []
            sessions[client.clientID]?.queued = []
            for message in queued { client.feed.yield(message) }
        }
        client.notify(.connected(sessionPresent: sessionPresent))
        for waiter in client.connectionWaiters.values { waiter.resume(returning: true) }
        clients[number]?.connectionWaiters = [:]
        sendOutbox(of: number)
    }

    /// Ends client `number`'s connection uncleanly: the broker publishes its will; its unacknowledged messages will
    /// be sent again after it reconnects.
    mutating func loseConnection(of number: Int, reason: String) {
        guard let client = clients[number], client.isConnected else { return }
        detach(number)
        for index in client.outbox.indices { clients[number]?.outbox[index].sent = false }
        heldAcknowledgements.removeAll { $0.client == number }
        client.notify(.disconnected(.connectionLost(reason)))
        if let will = client.configuration.lastWill {
            route(MQTTMessage(topic: will.topic, payload: will.payload, qos: will.qos, retained: will.retain))
        }
    }

    /// Marks client `number` disconnected and leaves its session (forgotten unless persistent).
    private mutating func detach(_ number: Int) {
        guard let client = clients[number] else { return }
        clients[number]?.isConnected = false
        guard sessions[client.clientID]?.connectedClient == number else { return }
        if client.configuration.cleanSession {
            sessions[client.clientID] = nil
        } else {
            sessions[client.clientID]?.connectedClient = nil
        }
    }

    /// The streams of a client that has just closed: finished by the caller outside the lock (finishing a stream
    /// runs its termination handler, which takes the lock).
    struct ClosedStreams {
        var connectionObservers: [AsyncStream<MQTTConnectionEvent>.Continuation] = []
        var acknowledgementObservers: [AsyncStream<MQTTMessageID>.Continuation] = []

        func finish() {
            for observer in connectionObservers { observer.finish() }
            for observer in acknowledgementObservers { observer.finish() }
        }
    }

    /// A clean end: `finalMessage` first (if connected), then DISCONNECT (no will); every stream of the client ends.
    /// Messages still unacknowledged are lost, as `MQTTClient`'s are after its timeout.
    mutating func disconnect(_ number: Int, finalMessage: MQTTMessage?) -> ClosedStreams {
        guard let client = clients[number], client.lifecycle != .closed else { return ClosedStreams() }
        if let finalMessage, client.isConnected {
            _ = try? publish(finalMessage, from: number)
        }
        let wasConnected = client.isConnected
        detach(number)
        clients[number]?.lifecycle = .closed
        heldAcknowledgements.removeAll { $0.client == number }
        guard let closed = clients[number] else { return ClosedStreams() }
        if wasConnected { closed.notify(.disconnected(.requested)) }
        for waiter in closed.connectionWaiters.values { waiter.resume(returning: false) }
        clients[number]?.connectionObservers = [:]
        clients[number]?.acknowledgementObservers = [:]
        clients[number]?.connectionWaiters = [:]
        closed.feed.finish()
        return ClosedStreams(
            connectionObservers: Array(closed.connectionObservers.values),
            acknowledgementObservers: Array(closed.acknowledgementObservers.values))
    }

    mutating func setAcceptsConnections(_ accepts: Bool) {
        acceptsConnections = accepts
        guard accepts else { return }
        for number in clients.keys.sorted() { connect(number) }
    }
}
