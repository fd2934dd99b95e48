import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshTesting
import Foundation
import Logging
import Synchronization
import Testing

@testable import BeaconMeshCoordinator

/// A coordinator whose start fails at any step leaves nothing running: each step is made to fail in turn, with real
/// broker connections (libmosquitto's threads and sockets), a real registry writer and two webhooks, and the
/// process's threads and file descriptors are counted before and after. Among the load tests (one test at a time):
/// beside other tests the counts would be theirs too.
@Suite("coordinator start failures", .serialized)
struct CoordinatorStartFailureTests {
    /// Where the start fails: the n-th call to the broker clients (starts, subscriptions, the online status), or an
    /// endpoint's unreadable `cafile`.
    enum Step: CustomTestStringConvertible, Sendable {
        case webhookCafile
        case brokerCall(Int)

        var testDescription: String {
            switch self {
            case .webhookCafile: "a webhook's cafile"
            case .brokerCall(let n): "broker call \(n)"
            }
        }
    }

    static var threads: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1 }
    static var descriptors: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

    @Test(
        "each step failing in turn: the start throws and leaves no thread or file descriptor behind",
        arguments: [Step.webhookCafile] + (1...8).map(Step.brokerCall))
    func failingStep(_ step: Step) async throws {
        let broker = try await MosquittoBroker.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-start-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Array("secret".utf8).withUnsafeBufferPointer { try Data($0).write(to: URL(fileURLWithPath: folder + "/secret")) }
        let registry = try SQLiteRegistry(path: folder + "/registry.sqlite")
        var configuration = CoordinatorConfiguration(id: "start-\(UUID().uuidString.prefix(8))")
        configuration.broker.url = broker.url
        var store = CoordinatorConfiguration.Store(id: 1, name: "High Street")
        store.departments = [.init(id: 10, name: "Clothing", presence: PresenceRules())]
        configuration.stores = [store]
        configuration.webhooks = ["crm", "erp"].map { name in
            var endpoint = WebhookEndpoint(
                name: name, url: "http://127.0.0.1:9/\(name)", secretFile: folder + "/secret", events: [.arrived])
            endpoint.secret = Array("secret".utf8)
            if case .webhookCafile = step, name == "erp" { endpoint.cafile = folder + "/missing.pem" }
            return endpoint
        }
        MQTTLibrary.initialize()
        let connections = try CoordinatorService.mqttConfigurations(for: configuration)
        var logger = Logger(label: "test.start")
        logger.logLevel = .critical
        let failing: Int? = if case .brokerCall(let n) = step { n } else { nil }
        let calls = CallCounter(failing: failing)
        let session = FailingClient(try MQTTClient(configuration: connections.session, logger: logger), calls: calls)
        let publisher = FailingClient(try MQTTClient(configuration: connections.publisher, logger: logger), calls: calls)
        let service = CoordinatorService(
            configuration: configuration, registry: registry, session: session, publisher: publisher, logger: logger)
        // What the test itself holds open is counted before: the registry, the broker's process.
        let before = (threads: Self.threads, descriptors: Self.descriptors)
        await #expect(throws: (any Error).self) { try await service.run() }
        // A thread that was told to stop may take a moment to end.
        var after = (threads: Self.threads, descriptors: Self.descriptors)
        for _ in 0..<50 where after.threads > before.threads || after.descriptors > before.descriptors {
            try await Task.sleep(for: .milliseconds(100))
            after = (Self.threads, Self.descriptors)
        }
        #expect(after.threads <= before.threads, "threads \(before.threads) → \(after.threads) (\(Self.threadNames))")
        #expect(after.descriptors <= before.descriptors, "file descriptors \(before.descriptors) → \(after.descriptors)")
        await broker.stop()
    }

    static var threadNames: String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.sorted().joined(separator: ", ")
    }
}

/// Counts the calls that can fail at a start (starts, subscriptions, publications) across both clients, and fails the
/// `failing`-th.
final class CallCounter: Sendable {
    private let count = Mutex(0)
    let failing: Int?

    init(failing: Int?) {
        self.failing = failing
    }

    func call(_ name: String) throws(MQTTError) {
        let n = count.withLock { count in
            count += 1
            return count
        }
        if n == failing { throw MQTTError.invalidConfiguration("\(name) made to fail") }
    }
}

/// A real client whose starts, subscriptions and publications go through `calls` first.
final class FailingClient: MQTTClientProtocol {
    let client: MQTTClient
    let calls: CallCounter

    init(_ client: MQTTClient, calls: CallCounter) {
        self.client = client
        self.calls = calls
    }

    var configuration: MQTTConfiguration { client.configuration }
    var messages: MQTTMessages { client.messages }
    var isConnected: Bool { client.isConnected }
    var unacknowledgedCount: Int { client.unacknowledgedCount }

    func start() throws(MQTTError) {
        try calls.call("start")
        try client.start()
    }

    func connectionEvents() -> AsyncStream<MQTTConnectionEvent> { client.connectionEvents() }
    func waitUntilConnected(timeout: Duration) async -> Bool { await client.waitUntilConnected(timeout: timeout) }

    func publish(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) throws(MQTTError) -> MQTTMessageID {
        try calls.call("publish")
        return try client.publish(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    func acknowledgements() -> AsyncStream<MQTTMessageID> { client.acknowledgements() }
    func isAcknowledged(_ id: MQTTMessageID) -> Bool { client.isAcknowledged(id) }

    func subscribe(_ filter: String, qos: MQTTQoS) throws(MQTTError) {
        try calls.call("subscribe")
        try client.subscribe(filter, qos: qos)
    }

    func unsubscribe(_ filter: String) throws(MQTTError) { try client.unsubscribe(filter) }

    func disconnect(timeout: Duration, finalMessage: MQTTMessage?) async -> [MQTTTrouble] {
        await client.disconnect(timeout: timeout, finalMessage: finalMessage)
    }
}
