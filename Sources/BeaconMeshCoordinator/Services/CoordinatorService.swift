import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshThreads
import BeaconMeshWire
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The back-office brain: consumes every sighting and node status of its stores, runs the presence engine, and
/// publishes events, promos, offers and the retained presence snapshots.
///
/// Messages are decoded on every core it may use and decided in arrival order by one task (`CoordinatorState`, a
/// pure state machine: inputs and time in, actions out), which alone holds the state, so nothing waits on a lock.
/// Visits and promo history are kept in the registry, so a restart greets nobody twice; they are written by a
/// `RegistryWriter` on its own thread, so the database never holds up a sighting on its way to an event, and a
/// locked, full or unreachable database delays the writes without losing them. Changes made by others (the `members`
/// command; with a shared PostgreSQL registry the other stores' coordinators) are read by a third task, outside the
/// decisions, as the registry's change feed reports them.
///
/// With a shared PostgreSQL registry it decides only for the stores whose lease it holds (`LeaseKeeper` claims and
/// renews them; the decisions' `LeaseBook` says, by the monotonic clock, until when each may be decided for, and
/// anything decided for a store is published only until then). It stands by for the others, and takes a store over
/// when it gains its lease, continuing it from the registry as a restart would.
///
/// It talks to the broker over two connections (`Connections`): the session connection receives and acknowledges
/// the sighting stream, the publishing connection sends what the coordinator says, each tuned for its direction.
public final class CoordinatorService: Service {
    let configuration: CoordinatorConfiguration
    let registry: any MemberRegistry
    let leases: (any StoreLeases)?
    let session: any MQTTClientProtocol
    let publisher: any MQTTClientProtocol
    let clock: any ServiceClock
    let logger: Logger
    let topics: Topics
    let healthInterval: Duration
    let cache: CoordinatorCacheFile?
    let coldStart: ColdStart?
    let fobs: FobResolution?

    /// A start without the database: from the local cache, because the database could not be reached (`cause`).
    public struct ColdStart: Sendable {
        public var cache: CoordinatorCacheDocument
        public var cause: String

        public init(cache: CoordinatorCacheDocument, cause: String) {
            self.cache = cache
            self.cause = cause
        }
    }

    /// How often the decisions are ticked (`DecisionTimings`).
    static let tickInterval = DecisionTimings.standard.tick
    /// The registry's change feed is waited on at most this long at a time (SQLite's is looked at this often; a
    /// PostgreSQL one answers as soon as a change is announced); the outbox of registry events is checked as often.
    static let registryPollInterval: Duration = .seconds(2)

    /// A coordinator that publishes its health every `healthInterval` (the contract's default: 30 s), with clients
    /// made from `mqttConfigurations(for:)`, reading the time and waiting on `clock`. With `leases` (a shared
    /// PostgreSQL registry's) it decides for the stores whose lease it holds; without, for all its stores. With
    /// `cache`, it keeps its local cache there; with `coldStart`, it starts from that cache instead of the registry.
    /// With `fobs`, the members' Eddystone-EID ids are resolved to their fobs before the decisions.
    public init(
        configuration: CoordinatorConfiguration, registry: any MemberRegistry, leases: (any StoreLeases)? = nil,
        session: any MQTTClientProtocol, publisher: any MQTTClientProtocol, logger: Logger,
        healthInterval: Duration = .seconds(30), clock: any ServiceClock = WallClock(), cache: CoordinatorCacheFile? = nil,
        coldStart: ColdStart? = nil, fobs: FobResolution? = nil
    ) {
        self.fobs = fobs
        self.cache = cache
        self.coldStart = coldStart
        self.leases = leases
        self.clock = clock
        self.healthInterval = healthInterval
        self.configuration = configuration
        self.registry = registry
        self.session = session
        self.publisher = publisher
        self.logger = logger
        self.topics = Topics(root: configuration.topicRoot)
    }

    /// The coordinator's two broker connections.
    public struct Connections: Sendable {
        /// Subscribes to the stores' sightings and node status and carries the coordinator's status: the config's id
        /// as a fixed client id, a persistent session (the broker queues sightings while the coordinator is down) and
        /// a retained `offline` status as last will. Its only frequent packets are acknowledgements, so Nagle's
        /// algorithm stays on and lets them share TCP segments (measured with `beacon-bench coordinator`: about 7 % less CPU
        /// per sighting batch than with every acknowledgement sent on its own).
        public var session: MQTTConfiguration
        /// Publishes events, offers, snapshots and health, each at once (`TCP_NODELAY`), under the client id
        /// `{id}-publisher` with a clean session.
        public var publisher: MQTTConfiguration
    }

    /// The configurations of the coordinator's two connections (credentials read now).
    public static func mqttConfigurations(for configuration: CoordinatorConfiguration) throws(BrokerConnection.Failure) -> Connections {
        let topics = Topics(root: configuration.topicRoot)
        let will = MQTTLastWill(
            topic: topics.coordinatorStatus(id: configuration.id),
            payload: WireCodec.encode(
                CoordinatorStatus(state: .offline, stores: configuration.storeIDs, active: [], startedAt: WallClock.now())),
            qos: .atLeastOnce, retain: true)
        let broker = configuration.broker
        let connection = BrokerConnection(
            url: broker.url, username: broker.username, passwordFile: broker.passwordFile, caFile: broker.cafile)
        var session = try connection.mqttConfiguration(clientID: configuration.id, cleanSession: false, lastWill: will)
        session.sendsWithoutDelay = false
        let publisher = try connection.mqttConfiguration(clientID: configuration.id + "-publisher", cleanSession: true, lastWill: nil)
        return Connections(session: session, publisher: publisher)
    }

    /// Starts each part in turn — a step that fails stops what the ones before it started, and throws — then runs
    /// them as services, stopped at shutdown in reverse order: the decisions (queueing their last changes), the poll,
    /// the webhooks, the writer (writing what is queued, keeping the rest in the cache), the leases (released), the
    /// broker connections (`offline` last).
    public func run() async throws {
        let clock = self.clock
        let startedAt = clock.now()
        let start =
            try coldStart.map { CoordinatorState.Start(cache: $0.cache) }
            ?? CoordinatorState.Start.read(from: registry, stores: Set(configuration.storeIDs), at: startedAt)
        let state = CoordinatorState(
            configuration: configuration, start: start, logger: logger, topics: topics,
            startedAt: startedAt, healthInterval: healthInterval, leaseTTL: leases == nil ? nil : configuration.lease.ttl)
        let webhooks = try Webhooks(
            configuration, outbox: registry, active: state.status.active, topics: topics, logger: logger, clock: clock)
        let workers = CoordinatorService.decodingWorkers()
        let inbox = DecisionInbox(capacity: 2 * workers)
        let writer = try RegistryWriter(registry: registry, stores: Set(configuration.storeIDs), logger: logger, clock: { clock.now() })
        var keeper: LeaseKeeper?
        let broker: BrokerSessionService
        do {
            replayCachedWrites(on: writer)
            keeper = makeLeaseKeeper(inbox: inbox)
            try keeper?.start()
            broker = try await .connect(
                configuration, session: session, publisher: publisher, status: state.status, topics: topics, logger: logger)
        } catch {
            keeper?.stop(release: true)
            await writer.close(timeout: .seconds(1))
            throw error
        }
        logRunning(workers: workers, webhooks: webhooks)
        let caches = CacheMailbox(LatestCache())
        let lastCache = LastCache()
        let reachability = self.reachability(startedAt: startedAt)
        let performing = Performing(
            publisher: publisher, session: session, writer: writer, snapshots: SnapshotMailbox(), keeper: keeper,
            leaseHolder: keeper == nil ? nil : configuration.id, healthTopic: topics.coordinatorHealth(id: configuration.id),
            statusTopic: topics.coordinatorStatus(id: configuration.id), status: broker.status, caches: caches, clock: clock,
            logger: logger, webhooks: webhooks, fobs: fobs)
        let poll = RegistryPoll.Parts(
            registry: registry, publisher: publisher, topics: topics, writer: writer, inbox: inbox, reachability: reachability,
            logger: logger, webhooks: webhooks.map { ($0.routes, $0.stores, configuration.storeIDs[0]) }, fobs: fobs)
        let services: [(any Service)?] = [
            broker, keeper.map(LeaseKeeperService.init),
            RegistryWriterService(writer: writer, cache: cache, caches: caches, lastCache: lastCache, logger: logger), webhooks,
            RegistryPollService(parts: poll, contents: start.contents, configuration: configuration),
            DecisionService(
                state: state, performing: performing, messages: session.messages, inbox: inbox, workers: workers,
                reachability: reachability, fobs: fobs, lastCache: cache == nil ? nil : lastCache, topics: topics),
        ]
        let group = ServiceGroup(
            configuration: .init(services: services.compactMap { $0.map { .init(service: $0) } }, logger: logger))
        try await withGracefulShutdownHandler {
            try await group.run()
        } onGracefulShutdown: {
            Task { await group.triggerGracefulShutdown() }
        }
        logger.info("coordinator stopped")
    }
}
