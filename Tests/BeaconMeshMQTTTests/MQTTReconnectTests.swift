import BeaconMeshTesting
import Foundation
import Testing

@testable import BeaconMeshMQTT

/// A client keeps reconnecting with backoff through any failure after its first connection — here a broker that
/// comes back with a certificate the client does not trust, which ended libmosquitto's own loop thread.
@Suite("Reconnecting through failures", .serialized)
struct MQTTReconnectTests {
    @Test("after reconnects that fail in TLS the client connects again, re-subscribes and delivers a QoS 1 message queued meanwhile")
    func reconnectsAfterTLSFailures() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-reconnect-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let trusted = try await TestCertificates.generate(in: directory + "/trusted")
        let foreign = try await TestCertificates.generate(in: directory + "/foreign")
        let plainPort = try FreePort.next()
        let tlsPort = try FreePort.next()
        // One broker address, two certificates: the same ports, one broker at a time.
        let good = try MosquittoBroker(port: plainPort, extraConfiguration: trusted.tlsListenerConfiguration(port: tlsPort))
        let bad = try MosquittoBroker(port: plainPort, extraConfiguration: foreign.tlsListenerConfiguration(port: tlsPort))
        try await good.start()

        let client = try makeClient("mqtts://127.0.0.1:\(tlsPort)") { $0.caFile = trusted.caCertificate }
        let inbox = Inbox(client)
        let events = client.connectionEvents()
        let watcher = Task {
            var troubles: [MQTTTrouble] = []
            for await case .trouble(let trouble) in events { troubles.append(trouble) }
            return troubles
        }
        try await startAndConnect(client)
        try await subscribeAndWait(client, "tls/#")

        // The broker comes back with a certificate from another CA: every reconnect now fails in the TLS handshake.
        await good.stop()
        try await bad.start()
        let queued = try client.publish(
            topic: "tls/queued", string: "published while the broker had the wrong certificate",
            qos: .atLeastOnce, retain: true)
        // Several reconnect attempts (backoff 1–2 s) against the wrong certificate, each one refused.
        let attempts = await eventually(timeout: .seconds(15), interval: .milliseconds(100)) {
            bad.log.components(separatedBy: "New connection from 127.0.0.1").count - 1 >= 3
        }
        #expect(attempts, "the client never tried to reconnect to the broker with the wrong certificate:\n\(bad.log)")
        #expect(!client.isConnected, "the client must not accept a certificate from an unknown CA")

        // The right certificate again: the client must find its way back by itself.
        await bad.stop()
        try await good.start()
        let reconnected = await client.waitUntilConnected(timeout: .seconds(10))
        try #require(reconnected, "the client stayed disconnected after the broker had its trusted certificate again")
        #expect(
            await client.waitForAcknowledgement(of: queued, timeout: .seconds(10)),
            "the QoS 1 message published while disconnected was not acknowledged")

        // Delivered: a plain-text subscriber gets it (retained) from the broker.
        let subscriber = try await MosquittoClients.subscribe(port: plainPort, filter: "tls/queued", qos: 1)
        let line = await subscriber.waitForLine(timeout: .seconds(10)) { $0.hasPrefix("tls/queued ") }
        #expect(line == "tls/queued published while the broker had the wrong certificate")
        await subscriber.stop()

        // Re-subscribed: a message published now reaches the client.
        #expect(await client.waitUntilSubscribed("tls/#", timeout: .seconds(10)))
        try await MosquittoClients.publish(port: plainPort, topic: "tls/after", string: "back again", qos: 1)
        #expect(await inbox.first(topic: "tls/after")?.payloadString == "back again")

        await client.disconnect()
        await good.stop()
        // Each refused handshake was reported to the caller, with OpenSSL's reason (the module logs it at debug only).
        let troubles = await watcher.value
        #expect(
            troubles.count { if case .library(let line) = $0 { line.contains("certificate verify failed") } else { false } } >= 2,
            "\(troubles)")
    }

    @Test("an idle client stays connected past 1.5 × its keep-alive: the network loop sends the pings")
    func idleClientKeepsItsConnection() async throws {
        let broker = try await MosquittoBroker.start()
        let client = try makeClient(broker.url)  // keep-alive 5 s: the broker gives up after 7.5 s of silence
        let events = client.connectionEvents()
        try await startAndConnect(client)
        let watcher = Task {
            var changes: [MQTTConnectionEvent] = []
            for await event in events { changes.append(event) }
            return changes
        }
        try await Task.sleep(for: .seconds(9))
        #expect(client.isConnected)
        await client.disconnect()
        let changes = await watcher.value
        #expect(
            changes.filter { if case .disconnected(.connectionLost) = $0 { true } else { false } }.isEmpty,
            "the connection was lost while idle: \(changes)")
        #expect(!broker.log.contains("exceeded timeout"), "the broker timed the idle client out:\n\(broker.log)")
        await broker.stop()
    }

    @Test("reconnect waits grow as min × attempt², up to the maximum")
    func backoff() {
        let waits = (1...5).map { MQTTConnectionLoop.backoff(attempt: $0, minimum: .seconds(1), maximum: .seconds(10)) }
        #expect(waits == [.seconds(1), .seconds(4), .seconds(9), .seconds(10), .seconds(10)])
        #expect(MQTTConnectionLoop.backoff(attempt: 1_000_000, minimum: .seconds(2), maximum: .seconds(30)) == .seconds(30))
    }
}
