import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging
import ServiceLifecycle

/// The back-office brain: consumes every sighting and node status of its stores, runs the presence engine, and
/// publishes events, promos, offers and the retained presence snapshots.
///
/// All state lives in one loop (`run`) fed by broker messages and a 250 ms tick, so nothing here needs a lock.
/// Visits and promo history are kept in the registry, so a restart greets nobody twice.
public final class CoordinatorService: Service {
    private let configuration: CoordinatorConfiguration
    private let registry: MemberRegistry
    private let client: MQTTClient
    private let logger: Logger
    private let topics: Topics
    private let healthInterval: Duration

    /// How often the engine is ticked (arrival settling, switch dwell, exits, promos).
    static let tickInterval: Duration = .milliseconds(250)
    /// Snapshots go out at most this often per store …
    static let snapshotMinimumInterval: Duration = .milliseconds(250)
    /// … and at least this often.
    static let snapshotRefreshInterval: Duration = .seconds(30)
    /// Open visits (with their last-seen times) are saved at least this often.
    static let visitSaveInterval: Duration = .seconds(5)
    /// The registry is checked this often for changes made by the `members` command.
    static let registryPollInterval: Duration = .seconds(2)

    /// A coordinator that publishes its health every `healthInterval` (the contract's default: 30 s).
    public init(configuration: CoordinatorConfiguration, registry: MemberRegistry, client: MQTTClient, logger: Logger,
                healthInterval: Duration = .seconds(30)) {
        self.healthInterval = healthInterval
        self.configuration = configuration
        self.registry = registry
        self.client = client
        self.logger = logger
        self.topics = Topics(root: configuration.topicRoot)
    }

    /// The client configuration the coordinator uses: its id as a fixed client id, a persistent session, and a
    /// retained `offline` status as last will.
    public static func mqttConfiguration(for configuration: CoordinatorConfiguration) throws(BrokerConnection.Failure) -> MQTTConfiguration {
        let topics = Topics(root: configuration.topicRoot)
        let will = MQTTLastWill(
            topic: topics.coordinatorStatus(id: configuration.id),
            payload: WireCodec.encode(CoordinatorStatus(state: .offline, stores: configuration.storeIDs, startedAt: WallClock.now())),
            qos: .atLeastOnce, retain: true)
        let broker = configuration.broker
        return try BrokerConnection(url: broker.url, username: broker.username, passwordFile: broker.passwordFile, caFile: broker.cafile)
            .mqttConfiguration(clientID: configuration.id, cleanSession: false, lastWill: will)
    }

    private enum Input: Sendable {
        case message(MQTTMessage)
        case tick
    }

    public func run() async throws {
        let startedAt = WallClock.now()
        var state = try CoordinatorState(configuration: configuration, registry: registry, logger: logger, topics: topics,
                                         startedAt: startedAt, healthInterval: healthInterval)
        try client.start()
        for store in configuration.storeIDs {
            try client.subscribe(topics.allSightings(store: store), qos: .atLeastOnce)
            try client.subscribe(topics.allNodeStatus(store: store), qos: .atLeastOnce)
        }
        let online = CoordinatorStatus(state: .online, stores: configuration.storeIDs, startedAt: startedAt)
        try client.publish(topic: topics.coordinatorStatus(id: configuration.id), payload: WireCodec.encode(online),
                           qos: .atLeastOnce, retain: true)
        logger.info("coordinator running", metadata: [
            "id": "\(configuration.id)", "broker": "\(configuration.broker.url)",
            "stores": "\(configuration.storeIDs.map(String.init).joined(separator: ","))",
        ])

        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
        let messages = client.messages
        let forwarder = Task {
            for await message in messages { continuation.yield(.message(message)) }
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: CoordinatorService.tickInterval)
                continuation.yield(.tick)
            }
        }
        await withGracefulShutdownHandler {
            for await input in inputs {
                let now = WallClock.now()
                switch input {
                case .message(let message):
                    state.receive(message, at: now)
                case .tick:
                    state.tick(at: now)
                }
                for publication in state.takePublications() {
                    do {
                        try client.publish(topic: publication.topic, payload: publication.payload, qos: publication.qos,
                                           retain: publication.retain)
                    } catch {
                        logger.warning("could not publish", metadata: ["topic": "\(publication.topic)", "error": "\(error)"])
                    }
                }
            }
        } onGracefulShutdown: {
            continuation.finish()
        }
        forwarder.cancel()
        ticker.cancel()
        state.saveVisits()
        let offline = CoordinatorStatus(state: .offline, stores: configuration.storeIDs, startedAt: startedAt)
        await client.disconnect(timeout: .seconds(5), finalMessage: MQTTMessage(
            topic: topics.coordinatorStatus(id: configuration.id), payload: WireCodec.encode(offline), qos: .atLeastOnce, retained: true))
        logger.info("coordinator stopped")
    }
}
