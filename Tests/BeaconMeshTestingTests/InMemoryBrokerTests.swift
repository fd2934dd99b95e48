import BeaconMeshMQTT
import BeaconMeshTesting
import Testing

/// Everything `client` has received: disconnects it (which ends `messages`) and reads what is left.
private func everythingReceived(by client: InMemoryMQTTClient) async -> [MQTTMessage] {
    await client.disconnect(timeout: .zero)
    var received: [MQTTMessage] = []
    for await message in client.messages { received.append(message) }
    return received
}

@Suite("In-memory broker")
struct InMemoryBrokerTests {
    @Test("a subscriber gets what its + and # filters match, in publish order, once each, and nothing else")
    func filtersAndOrder() async throws {
        let broker = InMemoryBroker()
        let subscriber = try broker.client(clientID: "sub")
        try subscriber.start()
        try subscriber.subscribe("beaconmesh/v1/stores/+/events")
        try subscriber.subscribe("beaconmesh/v1/stores/1/#")
        for topic in [
            "beaconmesh/v1/stores/1/events", "beaconmesh/v1/stores/2/events", "beaconmesh/v1/stores/2/x/events",
            "beaconmesh/v1/stores/1/nodes/10/a/status", "beaconmesh/v1/stores/10", "other/1/events",
        ] {
            try broker.publish(topic: topic, string: topic)
        }
        let received = await everythingReceived(by: subscriber)
        // stores/1/events matches both filters but arrives once.
        #expect(
            received.map(\.topic) == [
                "beaconmesh/v1/stores/1/events", "beaconmesh/v1/stores/2/events", "beaconmesh/v1/stores/1/nodes/10/a/status",
            ])
        #expect(received.map(\.payloadString) == received.map(\.topic))
    }

    @Test("an invalid filter or topic is refused with the broker's rule")
    func invalidFilters() throws {
        let broker = InMemoryBroker()
        let client = try broker.client()
        #expect(throws: MQTTError.self) { try client.subscribe("a/#/b") }
        #expect(throws: MQTTError.self) { try client.subscribe("a+") }
        #expect(throws: MQTTError.self) { try client.publish(topic: "a/+", string: "x") }
        #expect(throws: MQTTError.self) { try broker.publish(topic: "a/#", string: "x") }
    }

    @Test("a retained message reaches a later subscriber flagged as retained; live ones are not flagged; empty clears")
    func retainedMessages() async throws {
        let broker = InMemoryBroker()
        try broker.publish(topic: "s/a", string: "old", retain: true)
        try broker.publish(topic: "s/a", string: "new", retain: true)
        try broker.publish(topic: "s/b", string: "b", retain: true)
        try broker.publish(topic: "s/b", payload: [], retain: true)
        try broker.publish(topic: "s/c", string: "not kept")
        #expect(broker.retainedMessage(on: "s/a")?.payloadString == "new")
        #expect(broker.retainedMessage(on: "s/b") == nil)
        #expect(broker.retainedMessage(on: "s/c") == nil)

        let client = try broker.client()
        try client.start()
        try client.subscribe("s/+")
        try broker.publish(topic: "s/a", string: "live", retain: true)
        let received = await everythingReceived(by: client)
        #expect(received.map(\.payloadString) == ["new", "live"])
        #expect(received.map(\.retained) == [true, false])
    }

    @Test("the delivered QoS is the lower of the published and the subscribed one")
    func deliveredQoS() async throws {
        let broker = InMemoryBroker()
        let client = try broker.client()
        try client.start()
        try client.subscribe("q0", qos: .atMostOnce)
        try client.subscribe("q1", qos: .atLeastOnce)
        try broker.publish(topic: "q0", string: "", qos: .atLeastOnce)
        try broker.publish(topic: "q1", string: "", qos: .atMostOnce)
        try broker.publish(topic: "q1", string: "", qos: .atLeastOnce)
        #expect(await everythingReceived(by: client).map(\.qos) == [.atMostOnce, .atMostOnce, .atLeastOnce])
    }

    @Test("the last will is published when the connection is lost, not at a clean disconnect")
    func lastWill() async throws {
        let broker = InMemoryBroker()
        let will = MQTTLastWill(topic: "n/status", payload: Array("offline".utf8))
        let lost = try broker.client(clientID: "lost", lastWill: will)
        let clean = try broker.client(clientID: "clean", lastWill: MQTTLastWill(topic: "m/status", payload: [1]))
        try lost.start()
        try clean.start()
        let events = lost.connectionEvents()
        lost.simulateConnectionLoss()
        await clean.disconnect(timeout: .seconds(1))
        #expect(!lost.isConnected)
        #expect(broker.publications == [MQTTMessage(topic: "n/status", payload: Array("offline".utf8), qos: .atLeastOnce, retained: true)])
        #expect(broker.retainedMessage(on: "n/status")?.payloadString == "offline")
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .disconnected(.connectionLost("simulated connection loss")))
        #expect(broker.connectedClientIDs == [])
    }

    @Test("QoS 1 published while the connection is down goes out after it is restored, behind the announcement")
    func queuedWhileDisconnected() async throws {
        let broker = InMemoryBroker()
        let watcher = try broker.client()
        try watcher.start()
        try watcher.subscribe("#")
        let announcement = MQTTMessage(topic: "n/status", payload: Array("online".utf8), qos: .atLeastOnce, retained: true)
        let node = try broker.client(
            clientID: "node", lastWill: MQTTLastWill(topic: "n/status", payload: Array("offline".utf8)),
            announcement: announcement)
        try node.start()
        let beforeLoss = try node.publish(topic: "n/data", string: "1")
        #expect(node.isAcknowledged(beforeLoss))
        node.simulateConnectionLoss()
        let first = try node.publish(topic: "n/data", string: "2")
        let second = try node.publish(topic: "n/data", string: "3")
        #expect(throws: MQTTError.notConnected(topic: "n/data")) { try node.publish(topic: "n/data", string: "lost", qos: .atMostOnce) }
        #expect(!node.isAcknowledged(first) && !node.isAcknowledged(second))
        #expect(node.unacknowledgedCount == 2)
        node.restoreConnection()
        #expect(node.isConnected)
        #expect(node.isAcknowledged(first) && node.isAcknowledged(second))
        #expect(node.unacknowledgedCount == 0)
        #expect(await everythingReceived(by: watcher).map(\.payloadString) == ["online", "1", "offline", "online", "2", "3"])
    }

    @Test("a client started while the broker refuses connections connects when it accepts them")
    func brokerComesUp() async throws {
        let broker = InMemoryBroker()
        broker.acceptsConnections = false
        let client = try broker.client()
        try client.start()
        #expect(!client.isConnected)
        #expect(!(await client.waitUntilConnected(timeout: .milliseconds(1))))
        let events = client.connectionEvents()
        let id = try client.publish(topic: "t", string: "queued")
        broker.acceptsConnections = true
        #expect(await client.waitUntilConnected(timeout: .seconds(1)))
        #expect(client.isAcknowledged(id))
        #expect(broker.publications.map(\.payloadString) == ["queued"])
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .connected(sessionPresent: false))
    }

    @Test("a persistent session keeps QoS 1 messages while its client is away and hands them over on return")
    func persistentSession() async throws {
        let broker = InMemoryBroker()
        let first = try broker.client(clientID: "coordinator", cleanSession: false)
        try first.start()
        try first.subscribe("s/#")
        await first.disconnect(timeout: .zero)
        try broker.publish(topic: "s/1", string: "while away")
        try broker.publish(topic: "s/2", string: "qos 0 is not kept", qos: .atMostOnce)

        let second = try broker.client(clientID: "coordinator", cleanSession: false)
        let events = second.connectionEvents()
        try second.start()
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .connected(sessionPresent: true))
        try broker.publish(topic: "s/3", string: "live")  // the session's subscription, not re-made by this client
        #expect(await everythingReceived(by: second).map(\.payloadString) == ["while away", "live"])

        let clean = try broker.client(clientID: "coordinator", cleanSession: true)
        let cleanEvents = clean.connectionEvents()
        try clean.start()
        var cleanIterator = cleanEvents.makeAsyncIterator()
        #expect(await cleanIterator.next() == .connected(sessionPresent: false))
    }

    @Test("held acknowledgements keep messages unacknowledged until released; a lost connection sends them again")
    func heldAcknowledgements() async throws {
        let broker = InMemoryBroker()
        broker.holdsAcknowledgements = true
        let client = try broker.client()
        let acknowledgements = client.acknowledgements()
        try client.start()
        let a = try client.publish(topic: "t", string: "a")
        let b = try client.publish(topic: "t", string: "b")
        #expect(broker.publications.map(\.payloadString) == ["a", "b"])
        #expect(client.unacknowledgedCount == 2)
        client.simulateConnectionLoss()
        client.restoreConnection()
        #expect(broker.publications.map(\.payloadString) == ["a", "b", "a", "b"])  // at least once: sent again
        broker.releaseAcknowledgements()
        #expect(client.isAcknowledged(a) && client.isAcknowledged(b))
        var iterator = acknowledgements.makeAsyncIterator()
        #expect(await iterator.next() == a)
        #expect(await iterator.next() == b)
    }

    @Test("after disconnect every method throws closed, and messages and event streams end")
    func closed() async throws {
        let broker = InMemoryBroker()
        let client = try broker.client()
        try client.start()
        let events = client.connectionEvents()
        await client.disconnect(timeout: .zero, finalMessage: MQTTMessage(topic: "bye", payload: [1], qos: .atLeastOnce))
        #expect(broker.publications.map(\.topic) == ["bye"])
        #expect(throws: MQTTError.closed) { try client.publish(topic: "t", string: "x") }
        #expect(throws: MQTTError.closed) { try client.subscribe("t") }
        #expect(throws: MQTTError.closed) { try client.start() }
        var received: [MQTTConnectionEvent] = []
        for await event in events { received.append(event) }
        #expect(received == [.disconnected(.requested)])
        var messages = client.messages.makeAsyncIterator()
        #expect(await messages.next() == nil)
        #expect(!(await client.waitUntilConnected(timeout: .seconds(1))))
    }

    @Test("waitForPublications returns once enough match, however they arrive")
    func waitForPublications() async throws {
        let broker = InMemoryBroker()
        let publisher = Task {
            for index in 0..<3 {
                try broker.publish(topic: "a/\(index)", string: "\(index)")
                try broker.publish(topic: "b", string: "noise")
                await Task.yield()
            }
        }
        let found = try await broker.waitForPublications(matching: "a/+", count: 3)
        try await publisher.value
        #expect(found.prefix(3).map(\.payloadString) == ["0", "1", "2"])
        let none = try await broker.waitForPublications(matching: "c", count: 1, timeout: .milliseconds(10))
        #expect(none.isEmpty)
    }
}
