import BeaconMeshTesting
import Foundation
import Testing

@testable import BeaconMeshMQTT

@Suite("MQTT client against a real mosquitto", .timeLimit(.minutes(3)))
struct MQTTClientTests {
    @Test("QoS 0 and QoS 1 messages reach + and # subscribers with binary payloads intact")
    func publishSubscribeRoundTrip() async throws {
        let broker = try await MosquittoBroker.start()
        let subscriber = try makeClient(broker.url)
        let inbox = Inbox(subscriber)
        try await startAndConnect(subscriber)
        try await subscribeAndWait(subscriber, "beaconmesh/v1/stores/+/events")
        try await subscribeAndWait(subscriber, "beaconmesh/v1/stores/1/departments/#", qos: .atMostOnce)

        let publisher = try makeClient(broker.url)
        try await startAndConnect(publisher)
        let binary: [UInt8] = [0, 1, 2, 0xFF, 0xFE, 0x80, 0, 10, 13]
        let acknowledged = publisher.acknowledgements()
        let qos1 = try publisher.publish(topic: "beaconmesh/v1/stores/7/events", payload: binary, qos: .atLeastOnce)
        try publisher.publish(topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings", payload: binary, qos: .atMostOnce)
        try publisher.publish(topic: "beaconmesh/v1/stores/7/presence", string: "not subscribed", qos: .atLeastOnce)

        let event = try #require(await inbox.first(topic: "beaconmesh/v1/stores/7/events"))
        #expect(event.payload == binary)
        #expect(event.qos == .atLeastOnce)
        #expect(!event.retained)
        let sighting = try #require(await inbox.first(topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings"))
        #expect(sighting.payload == binary)
        #expect(sighting.qos == .atMostOnce, "delivered at the lower of publish and subscription QoS")

        #expect(await publisher.waitForAcknowledgement(of: qos1, timeout: .seconds(5)))
        var iterator = acknowledged.makeAsyncIterator()
        var seen: [MQTTMessageID] = []
        while !seen.contains(qos1), let id = await iterator.next() { seen.append(id) }
        #expect(seen.contains(qos1))

        // Sentinel: once it arrives, anything matching would have arrived too.
        try publisher.publish(topic: "beaconmesh/v1/stores/7/events", string: "sentinel")
        _ = await inbox.first { $0.payloadString == "sentinel" }
        #expect(!inbox.messages.contains { $0.topic == "beaconmesh/v1/stores/7/presence" })

        await publisher.disconnect()
        await subscriber.disconnect()
    }

    /// By default small packets leave at once (TCP_NODELAY: no 40 ms wait for a delayed ACK); a connection that mostly
    /// receives can keep Nagle's algorithm, so that its acknowledgements share segments.
    @Test("the socket has TCP_NODELAY exactly when the configuration asks for it", arguments: [true, false])
    func noDelay(sendsWithoutDelay: Bool) async throws {
        let broker = try await MosquittoBroker.start()
        let client = try makeClient(broker.url) { $0.sendsWithoutDelay = sendsWithoutDelay }
        try await startAndConnect(client)
        #expect(client.socketSendsWithoutDelayForTesting == sendsWithoutDelay)
        await client.disconnect()
    }

    @Test("a retained message reaches a later subscriber, flagged retained")
    func retainedMessage() async throws {
        let broker = try await MosquittoBroker.start()
        let publisher = try makeClient(broker.url)
        try await startAndConnect(publisher)
        let id = try publisher.publish(topic: "bm/status", string: "online", qos: .atLeastOnce, retain: true)
        try publisher.publish(topic: "bm/other", string: "fleeting", qos: .atLeastOnce)
        #expect(await publisher.waitForAcknowledgement(of: id, timeout: .seconds(5)))
        await publisher.disconnect()

        let late = try makeClient(broker.url)
        let inbox = Inbox(late)
        try await startAndConnect(late)
        try late.subscribe("bm/#")
        let status = try #require(await inbox.first(topic: "bm/status"))
        #expect(status.retained)
        #expect(status.payloadString == "online")
        #expect(!inbox.messages.contains { $0.topic == "bm/other" })
        await late.disconnect()
    }

    @Test("our messages reach mosquitto_sub and mosquitto_pub's messages reach us")
    func interoperatesWithMosquittoTools() async throws {
        let broker = try await MosquittoBroker.start()
        let sub = try await MosquittoClients.subscribe(port: broker.port, filter: "interop/#", qos: 1)
        let client = try makeClient(broker.url)
        let inbox = Inbox(client)
        try await startAndConnect(client)
        try await subscribeAndWait(client, "tools/+")

        try client.publish(topic: "interop/from-swift", string: "hello mosquitto_sub", qos: .atLeastOnce)
        let line = await sub.waitForLine { $0.hasPrefix("interop/from-swift ") }
        #expect(line == "interop/from-swift hello mosquitto_sub")

        let bytes: [UInt8] = [0x7B, 0x00, 0xC3, 0xA9, 0xFF, 0x0A]
        try await MosquittoClients.publish(port: broker.port, topic: "tools/pub", payload: bytes, qos: 1)
        let received = try #require(await inbox.first(topic: "tools/pub"))
        #expect(received.payload == bytes)

        await sub.stop()
        await client.disconnect()
    }

    @Test("a client that vanishes without DISCONNECT has its last will published")
    func lastWillOfKilledProcess() async throws {
        let broker = try await MosquittoBroker.start()
        let observer = try makeClient(broker.url)
        let inbox = Inbox(observer)
        try await startAndConnect(observer)
        try await subscribeAndWait(observer, "will/#")

        let doomed = try await MosquittoClients.subscribe(
            port: broker.port, filter: "anything",
            extraArguments: [
                "--will-topic", "will/doomed", "--will-payload", #"{"v":1,"state":"offline"}"#, "--will-qos", "1",
            ])
        doomed.process.send(SIGKILL)
        let will = try #require(await inbox.first(topic: "will/doomed"))
        #expect(will.payloadString == #"{"v":1,"state":"offline"}"#)
        await observer.disconnect()
    }

    @Test("our last will is published when our connection breaks, and not after a clean disconnect")
    func ourLastWill() async throws {
        let broker = try await MosquittoBroker.start()
        let observer = try makeClient(broker.url)
        let inbox = Inbox(observer)
        try await startAndConnect(observer)
        try await subscribeAndWait(observer, "nodes/+/status")

        let will = MQTTLastWill(topic: "nodes/a/status", payload: Array("offline".utf8), qos: .atLeastOnce, retain: false)
        let node = try makeClient(broker.url, clientID: "node-a", lastWill: will)
        try await startAndConnect(node)
        node.breakConnectionForTesting()
        let published = try #require(await inbox.first(topic: "nodes/a/status"))
        #expect(published.payloadString == "offline")
        // The client comes back by itself.
        #expect(await node.waitUntilConnected(timeout: .seconds(10)))

        let polite = try makeClient(
            broker.url, clientID: "node-b",
            lastWill: MQTTLastWill(
                topic: "nodes/b/status", payload: Array("offline".utf8), qos: .atLeastOnce, retain: false))
        try await startAndConnect(polite)
        await polite.disconnect(
            timeout: .seconds(2),
            finalMessage: MQTTMessage(
                topic: "nodes/b/status", payload: Array("bye".utf8), qos: .atLeastOnce))
        #expect(await inbox.first(topic: "nodes/b/status")?.payloadString == "bye")
        try await MosquittoClients.publish(port: broker.port, topic: "nodes/z/status", string: "sentinel")
        // The sentinel came after node-b's goodbye: a will published then would be in the inbox before it.
        #expect(await inbox.first(topic: "nodes/z/status") != nil)
        #expect(!inbox.messages.contains { $0.topic == "nodes/b/status" && $0.payloadString == "offline" })

        await node.disconnect()
        await observer.disconnect()
    }

    @Test("after a broker restart the client reconnects, re-subscribes and delivers QoS 1 messages published meanwhile")
    func reconnectsAfterBrokerRestart() async throws {
        let broker = try await MosquittoBroker.start()
        let client = try makeClient(broker.url)
        let inbox = Inbox(client)
        let log = ConnectionLog(client)
        try await startAndConnect(client)
        try await subscribeAndWait(client, "restart/#")

        await broker.stop()
        let lost = await eventually(timeout: .seconds(10)) { !client.isConnected }
        try #require(lost, "client did not notice the broker going away")

        // Measured behaviour: libmosquitto queues a QoS 1 message while disconnected (mosquitto_publish says
        // MOSQ_ERR_NO_CONN, the client returns the id) and sends it after the next CONNACK. QoS 0 is refused.
        let queued = try client.publish(topic: "restart/queued", string: "sent while the broker was down", qos: .atLeastOnce)
        #expect(client.unacknowledgedCount == 1)
        #expect(throws: MQTTError.notConnected(topic: "restart/lost")) {
            try client.publish(topic: "restart/lost", string: "QoS 0 while down", qos: .atMostOnce)
        }

        try await broker.restart()
        #expect(await client.waitUntilConnected(timeout: .seconds(10)))
        #expect(await client.waitUntilSubscribed("restart/#", timeout: .seconds(5)), "re-subscribed after reconnect")
        let delivered = try #require(await inbox.first(topic: "restart/queued"))
        #expect(delivered.payloadString == "sent while the broker was down")
        #expect(await client.waitForAcknowledgement(of: queued, timeout: .seconds(5)))
        #expect(client.unacknowledgedCount == 0)

        try await MosquittoClients.publish(port: broker.port, topic: "restart/after", string: "fresh")
        #expect(await inbox.first(topic: "restart/after") != nil, "the subscription works after the restart")

        let events = await log.events(atLeast: 3)
        #expect(events.first == .connected(sessionPresent: false))
        #expect(events.contains { if case .disconnected(.connectionLost) = $0 { true } else { false } })
        #expect(events.last == .connected(sessionPresent: false))
        await client.disconnect()
    }

    @Test("start() before the broker is up keeps retrying and connects once it starts")
    func connectsWhenBrokerComesUpLater() async throws {
        let broker = try MosquittoBroker()  // prepared, not running
        let client = try makeClient(broker.url)
        try client.start()
        #expect(await client.waitUntilConnected(timeout: .milliseconds(1500)) == false)
        #expect(!client.isConnected)

        try await broker.start()
        #expect(await client.waitUntilConnected(timeout: .seconds(10)), "connected after the broker came up")
        await client.disconnect()
    }

    @Test("a persistent session receives the QoS 1 messages published while it was offline")
    func persistentSession() async throws {
        let broker = try await MosquittoBroker.start()
        let first = try makeClient(broker.url, clientID: "coordinator-test", cleanSession: false)
        try await startAndConnect(first)
        try await subscribeAndWait(first, "offline/#")
        await first.disconnect()

        for number in 1...3 {
            try await MosquittoClients.publish(port: broker.port, topic: "offline/batch", string: "batch \(number)", qos: 1)
        }

        let again = try makeClient(broker.url, clientID: "coordinator-test", cleanSession: false)
        let inbox = Inbox(again)
        let log = ConnectionLog(again)
        try await startAndConnect(again)  // no subscribe(): the broker kept the subscription
        let batches = await inbox.collect(3) { $0.topic == "offline/batch" }
        #expect(batches.map(\.payloadString) == ["batch 1", "batch 2", "batch 3"])
        #expect(await log.events(atLeast: 1).first == .connected(sessionPresent: true))
        await again.disconnect()
    }

    /// `mosquitto_loop` reads one packet per `select`; the network loop reads a backlog on without one, and still
    /// acknowledges every message (a later session gets none of them again) — over TLS too, where decrypted bytes
    /// wait inside OpenSSL where no `select` sees them.
    @Test(
        "a backlog of 900 QoS 1 messages is mostly read without a select per message, in order, every one acknowledged",
        arguments: [false, true])
    func backlogIsReadInBursts(tls: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-backlog-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var url: String
        var caFile: String?
        let broker: MosquittoBroker
        if tls {
            let certificates = try await TestCertificates.generate(in: directory)
            let tlsPort = try FreePort.next()
            broker = try await MosquittoBroker.start(extraConfiguration: certificates.tlsListenerConfiguration(port: tlsPort))
            url = "mqtts://127.0.0.1:\(tlsPort)"
            caFile = certificates.caCertificate
        } else {
            broker = try await MosquittoBroker.start()
            url = broker.url
        }
        func session() throws -> MQTTClient {
            try makeClient(url, clientID: "backlog-test", cleanSession: false) { $0.caFile = caFile }
        }
        let first = try session()
        try await startAndConnect(first)
        try await subscribeAndWait(first, "backlog/#")
        await first.disconnect()

        let publisher = try makeClient(broker.url)
        try await startAndConnect(publisher)
        let count = 900  // mosquitto queues at most 1,000 for an offline session by default
        var last: MQTTMessageID?
        for number in 1...count {
            last = try publisher.publish(topic: "backlog/batch", string: "batch \(number)", qos: .atLeastOnce)
        }
        #expect(await publisher.waitForAcknowledgement(of: try #require(last), timeout: .seconds(20)))
        await publisher.disconnect()

        let again = try session()
        let inbox = Inbox(again)
        try await startAndConnect(again)
        #expect(again.seesTLSPendingBytesForTesting == tls)
        let batches = await inbox.collect(count) { $0.topic == "backlog/batch" }
        #expect(batches.map(\.payloadString) == (1...count).map { "batch \($0)" })
        let backlogReads = again.backlogReadsForTesting
        #expect(backlogReads >= count / 2, "\(backlogReads) of \(count) messages read without a select")
        await again.disconnect()

        // Every message was acknowledged: the session holds none of them any more.
        let third = try session()
        let thirdInbox = Inbox(third)
        try await startAndConnect(third)
        try await MosquittoClients.publish(port: broker.port, topic: "backlog/sentinel", string: "sentinel", qos: 1)
        let delivered = try #require(await thirdInbox.first { _ in true })
        #expect(delivered.topic == "backlog/sentinel", "redelivered: \(delivered.payloadString)")
        await third.disconnect()
    }

    @Test("queued messages of an offline persistent session survive a broker restart")
    func persistentSessionSurvivesBrokerRestart() async throws {
        let broker = try await MosquittoBroker.start(persistence: true)
        let first = try makeClient(broker.url, clientID: "coordinator-restart", cleanSession: false)
        try await startAndConnect(first)
        try await subscribeAndWait(first, "kept/#")
        await first.disconnect()

        try await MosquittoClients.publish(port: broker.port, topic: "kept/batch", string: "queued", qos: 1)
        try await broker.restart()

        let again = try makeClient(broker.url, clientID: "coordinator-restart", cleanSession: false)
        let inbox = Inbox(again)
        try await startAndConnect(again)
        #expect(await inbox.first(topic: "kept/batch")?.payloadString == "queued", "broker log:\n\(broker.log)")
        await again.disconnect()
    }

    @Test("disconnect waits until every QoS 1 message is acknowledged")
    func disconnectFlushesQoS1() async throws {
        let broker = try await MosquittoBroker.start()
        let sub = try await MosquittoClients.subscribe(port: broker.port, filter: "flush/#", qos: 1)
        let client = try makeClient(broker.url)
        try await startAndConnect(client)
        for number in 1...200 {
            try client.publish(topic: "flush/n", string: "\(number)", qos: .atLeastOnce)
        }
        #expect(await client.disconnect(timeout: .seconds(10)) == [])
        let last = await sub.waitForLine { $0 == "flush/n 200" }
        #expect(last != nil)
        #expect(sub.lines.count(where: { $0.hasPrefix("flush/n ") }) >= 200)
        await sub.stop()
    }

    @Test("what disconnect could not do is returned to the caller: messages the stopped broker never acknowledged")
    func disconnectReportsLostMessages() async throws {
        let broker = try await MosquittoBroker.start()
        let client = try makeClient(broker.url)
        try await startAndConnect(client)
        await broker.stop()
        for number in 1...3 {
            try client.publish(topic: "lost/n", string: "\(number)", qos: .atLeastOnce)
        }
        let troubles = await client.disconnect(timeout: .milliseconds(300))
        #expect(troubles == [.unacknowledgedAtClose(3)])
    }

    @Test("a client can be disconnected without ever connecting, and refuses work afterwards")
    func lifecycleEdges() async throws {
        let neverStarted = try makeClient("mqtt://127.0.0.1:1")
        await neverStarted.disconnect()
        #expect(throws: MQTTError.closed) { try neverStarted.start() }

        let port = try FreePort.next()
        let unreachable = try makeClient("mqtt://127.0.0.1:\(port)")
        try unreachable.start()
        #expect(await unreachable.waitUntilConnected(timeout: .milliseconds(300)) == false)
        let queued = try unreachable.publish(topic: "t", string: "never delivered", qos: .atLeastOnce)
        #expect(!unreachable.isAcknowledged(queued))
        await unreachable.disconnect(timeout: .milliseconds(300))
        #expect(throws: MQTTError.closed) { try unreachable.publish(topic: "t", string: "x") }
        #expect(throws: MQTTError.closed) { try unreachable.subscribe("t") }
        var ended = true
        for await _ in unreachable.messages { ended = false }
        #expect(ended, "messages ends after disconnect")

        // Dropped while still retrying its first connection, and dropped while connected, without disconnect():
        // deinit stops the loop thread and frees everything without hanging or crashing.
        do {
            let retrying = try makeClient("mqtt://127.0.0.1:\(port)")
            try retrying.start()
            try await Task.sleep(for: .milliseconds(100))
        }
        let broker = try await MosquittoBroker.start()
        do {
            let dropped = try makeClient(broker.url)
            try await startAndConnect(dropped)
        }
    }

    @Test("mqtts:// with a CA file connects to a TLS listener and verifies the certificate")
    func tlsWithCAFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-tls-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificates = try await TestCertificates.generate(in: directory)
        let tlsPort = try FreePort.next()
        let broker = try await MosquittoBroker.start(extraConfiguration: certificates.tlsListenerConfiguration(port: tlsPort))

        let client = try makeClient("mqtts://127.0.0.1:\(tlsPort)") { $0.caFile = certificates.caCertificate }
        let inbox = Inbox(client)
        try await startAndConnect(client)
        try await subscribeAndWait(client, "tls/#")
        try await MosquittoClients.publish(port: broker.port, topic: "tls/plain-side", string: "crossed over")
        #expect(await inbox.first(topic: "tls/plain-side")?.payloadString == "crossed over")
        await client.disconnect()

        // The system trust store does not know the test CA: the handshake must fail, not fall back.
        let untrusting = try makeClient("mqtts://127.0.0.1:\(tlsPort)")
        try untrusting.start()
        #expect(await untrusting.waitUntilConnected(timeout: .seconds(2)) == false)
        await untrusting.disconnect(timeout: .milliseconds(100))
    }

    @Test("mqtts:// really uses TLS: it never connects to a plain-text listener")
    func tlsIsNotSilentlyPlain() async throws {
        let broker = try await MosquittoBroker.start()
        let client = try makeClient("mqtts://127.0.0.1:\(broker.port)")
        try client.start()
        #expect(await client.waitUntilConnected(timeout: .seconds(3)) == false)
        await client.disconnect(timeout: .milliseconds(100))
    }
}
