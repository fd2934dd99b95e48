import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Synchronization

/// Head office's view of the nodes through one broker connection (`nodes list`, `nodes set`): every retained node
/// status and node config of the stores watched, and the health heard meanwhile, folded into a `NodeDirectory`.
///
/// Messages are folded on a task of their own; the caller waits on conditions of the directory (polled every 20 ms,
/// which is all a command line needs).
public final class FleetWatch: Sendable {
    private let client: any MQTTClientProtocol
    private let topics: Topics
    private let state = Shared()
    private let reader: Task<Void, Never>

    /// The state the reader task and the caller share.
    private final class Shared: Sendable {
        let mutex = Mutex(State())

        func withLock<T>(_ body: (inout State) -> T) -> T { mutex.withLock { body(&$0) } }
    }

    fileprivate struct State {
        var directory = NodeDirectory()
        var lastRetained: ContinuousClock.Instant?
        var malformed = 0
    }

    /// Starts `client` and subscribes to the node statuses, health and node configs of `store` (or every store).
    public init(client: any MQTTClientProtocol, topics: Topics, store: UInt16?) throws(MQTTError) {
        self.client = client
        self.topics = topics
        for filter in [
            topics.nodeStatusFilter(store: store), topics.nodeHealthFilter(store: store),
            topics.storeNodeConfigFilter(store: store), topics.nodeConfigFilter(store: store),
        ] {
            try client.subscribe(filter, qos: .atLeastOnce)
        }
        let state = self.state
        reader = Task { [client, topics] in
            for await message in client.messages {
                state.withLock { Self.fold(message, into: &$0, topics: topics) }
            }
        }
        try client.start()
    }

    private static func fold(_ message: MQTTMessage, into state: inout State, topics: Topics) {
        if message.retained { state.lastRetained = .now }
        let deleted = message.payload.isEmpty
        do {
            switch topics.parse(message.topic) {
            case .nodeStatus(let address)?:
                state.directory.record(status: deleted ? nil : try WireCodec.decodeNodeStatus(message.payload), of: address)
            case .nodeHealth(let address)?:
                state.directory.record(health: try WireCodec.decodeNodeHealth(message.payload), of: address, at: WallClock.now())
            case .storeNodeConfig(let store)?:
                state.directory.record(config: deleted ? nil : try WireCodec.decodeNodeConfigDocument(message.payload), store: store)
            case .nodeConfig(let address)?:
                state.directory.record(config: deleted ? nil : try WireCodec.decodeNodeConfigDocument(message.payload), of: address)
            default:
                break
            }
        } catch {
            state.malformed += 1
        }
    }

    /// The directory as gathered so far.
    public var directory: NodeDirectory { state.withLock { $0.directory } }

    /// Messages on the watched topics that were not the contract's payloads.
    public var malformed: Int { state.withLock { $0.malformed } }

    /// Waits for the broker (`false` when it cannot be reached within `timeout`), then until its retained messages
    /// have arrived: `quiet` without a new one.
    public func gatherRetained(timeout: Duration, quiet: Duration = .milliseconds(400)) async -> Bool {
        guard await client.waitUntilConnected(timeout: timeout) else { return false }
        let connected = ContinuousClock.now
        while true {
            let last = state.withLock { $0.lastRetained } ?? connected
            if ContinuousClock.now - last >= quiet { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Publishes `config` retained to `topic` and waits for the broker's acknowledgement.
    public func publish(_ config: NodeConfig, to topic: String, timeout: Duration) async throws(MQTTError) -> Bool {
        let id = try client.publish(topic: topic, payload: WireCodec.encode(config), qos: .atLeastOnce, retain: true)
        let deadline = ContinuousClock.now + timeout
        while !client.isAcknowledged(id) {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Waits until `done` holds of the directory or `timeout` passes; whether it held.
    public func wait(timeout: Duration, until done: (NodeDirectory) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if done(directory) { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Disconnects; the watch is done.
    public func close() async {
        await client.disconnect(timeout: .seconds(2), finalMessage: nil)
        reader.cancel()
    }
}
