import BeaconMeshMQTT
import Logging
import Synchronization

/// The simulated scanner nodes (and phones) of an end-to-end test: one long-lived broker connection (a real
/// libmosquitto client) per topic they publish on, instead of one `mosquitto_pub` per batch. Under load a process
/// start took longer than the batches' spacing, so a member's batches arrived late — stamped before the spawn — and
/// she left early (`LeaseFailoverTests` and `AnalyticsEndToEndTests` failed so beside other suites).
///
/// `publish` makes the payload when it sends it, so its `sentAt` is the moment it goes out, and waits until the
/// broker acknowledged it (QoS 1), as `mosquitto_pub -q 1` did. `close` ends every connection; a harness calls it
/// when it stops.
public final class SimulatedNodes: Sendable {
    private let port: Int
    private let clients = Mutex<[String: MQTTClient]>([:])

    /// Publishers to the broker on 127.0.0.1:`port`.
    public init(port: Int) {
        self.port = port
    }

    /// Publishes the payload `make` returns now to `topic` at QoS 1 on that topic's connection (opened at its first
    /// use), and waits for the broker's acknowledgement; throws when it does not come within `timeout`.
    public func publish(topic: String, timeout: Duration = .seconds(10), _ make: () -> String) async throws {
        let client = try await client(for: topic, timeout: timeout)
        let id = try client.publish(topic: topic, payload: Array(make().utf8), qos: .atLeastOnce, retain: false)
        guard await client.waitForAcknowledgement(of: id, timeout: timeout) else {
            throw TestSupportError("the broker on port \(port) did not acknowledge a message on \(topic) within \(timeout)")
        }
    }

    private func client(for topic: String, timeout: Duration) async throws -> MQTTClient {
        if let client = clients.withLock({ $0[topic] }) { return client }
        MQTTLibrary.initialize()
        var logger = Logger(label: "test.simulated-node")
        logger.logLevel = .critical
        let client = try MQTTClient(configuration: MQTTConfiguration(broker: try BrokerURL("mqtt://127.0.0.1:\(port)")), logger: logger)
        try client.start()
        guard await client.waitUntilConnected(timeout: timeout) else {
            await client.disconnect(timeout: .milliseconds(100))
            throw TestSupportError("cannot reach the broker on port \(port) to publish on \(topic)")
        }
        let kept = clients.withLock { clients in
            if let existing = clients[topic] { return existing }
            clients[topic] = client
            return client
        }
        if kept !== client { await client.disconnect(timeout: .milliseconds(100)) }
        return kept
    }

    /// Disconnects every publisher (QoS 1 messages still waiting are given a second to go).
    public func close() async {
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in all { await client.disconnect(timeout: .seconds(1)) }
    }
}
