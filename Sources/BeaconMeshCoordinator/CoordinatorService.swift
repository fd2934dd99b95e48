import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
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
    private let configuration: CoordinatorConfiguration
    private let registry: any MemberRegistry
    private let leases: (any StoreLeases)?
    private let session: any MQTTClientProtocol
    private let publisher: any MQTTClientProtocol
    private let clock: any ServiceClock
    private let logger: Logger
    private let topics: Topics
    private let healthInterval: Duration
    private let cache: CoordinatorCacheFile?
    private let coldStart: ColdStart?
    private let fobs: FobResolution?

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

    public func run() async throws {
        let clock = self.clock
        let startedAt = clock.now()
        let start =
            try coldStart.map { CoordinatorState.Start(cache: $0.cache) }
            ?? CoordinatorState.Start.read(from: registry, stores: Set(configuration.storeIDs), at: startedAt)
        let state = CoordinatorState(
            configuration: configuration, start: start, logger: logger, topics: topics,
            startedAt: startedAt, healthInterval: healthInterval, leaseTTL: leases == nil ? nil : configuration.lease.ttl)
        let writer = try RegistryWriter(registry: registry, stores: Set(configuration.storeIDs), logger: logger, clock: { clock.now() })
        let reachability = RegistryReachability(location: registry.location, clock: { clock.now() })
        if let coldStart {
            let saved = coldStart.cache.savedAt
            reachability.startedWithout(
                "started from the local cache \(cache?.path ?? "") saved \((startedAt - saved).wholeMilliseconds / 1000) s before: \(coldStart.cause)",
                at: startedAt)
        }
        let caches = CacheMailbox(LatestCache())
        let webhooks = try Webhooks(
            configuration, outbox: registry, active: state.status.active, topics: topics, logger: logger, clock: clock)
        if webhooks != nil {
            logger.info(
                "webhooks delivering",
                metadata: ["endpoints": "\(configuration.webhooks.map { "\($0.name) \($0.url)" }.joined(separator: ", "))"])
        }
        let delivering = webhooks.map { webhooks in Task { await webhooks.run() } }
        if let cache {
            // Writes a previous run kept in its cache (the database was away when it stopped): made once each.
            do {
                let kept = try coldStart?.cache ?? cache.read(coordinator: configuration.id, database: configuration.database)
                if let kept { cache.replayPendingWrites(of: kept, on: writer, logger: logger) }
            } catch {
                logger.error("the local cache cannot be read; it is replaced", metadata: ["error": "\(error)"])
            }
        }
        let sessionEvents = session.connectionEvents()
        try publisher.start()
        try session.start()
        for store in configuration.storeIDs {
            try session.subscribe(topics.allSightings(store: store), qos: .atLeastOnce)
            try session.subscribe(topics.allNodeStatus(store: store), qos: .atLeastOnce)
            try session.subscribe(topics.allRanging(store: store), qos: .atLeastOnce)
            try session.subscribe(topics.checkins(store: store), qos: .atLeastOnce)
            try session.subscribe(topics.survey(store: store), qos: .atLeastOnce)
        }
        // On the connection that holds the last will: should the broker still hold our previous session, taking it
        // over publishes its will first, and this comes after.
        let onlinePayload = LatestStatus(WireCodec.encode(state.status))
        try session.publish(
            topic: topics.coordinatorStatus(id: configuration.id), payload: onlinePayload.payload, qos: .atLeastOnce,
            retain: true)
        let workers = CoordinatorService.decodingWorkers()
        logger.info(
            "coordinator running",
            metadata: [
                "id": "\(configuration.id)", "broker": "\(configuration.broker.url)",
                "stores": "\(configuration.storeIDs.map(String.init).joined(separator: ","))", "decoders": "\(workers)",
            ])

        // Messages are decoded a chunk at a time on up to `workers` cores, and decided on one task, in arrival order,
        // together with ticks and registry changes (`DecisionInbox`). That task alone holds the state, so nothing is
        // locked; it publishes what it decides in order, hands registry changes to the writer's thread and
        // snapshots to a task of their own (a big store's snapshot takes a while to encode).
        let inbox = DecisionInbox(capacity: 2 * workers)
        let keeper = leases.map { [registry = self.registry, logger = self.logger, configuration] leases in
            LeaseKeeper(
                leases: leases, registry: registry, stores: configuration.storeIDs, holder: configuration.id,
                ttl: configuration.lease.ttl, renewInterval: LeaseBook(ttl: configuration.lease.ttl).renewInterval,
                inbox: inbox, logger: logger, clock: clock, readsHolders: configuration.alerts.contains { $0.when.kind == .storeUndecided },
                webhooks: WebhookList(endpoints: configuration.webhooks))
        }
        try keeper?.start()
        let snapshots = SnapshotMailbox()
        let messages = session.messages
        let publisher = self.publisher
        let session = self.session
        let logger = self.logger
        let topics = self.topics
        let statusTopic = topics.coordinatorStatus(id: configuration.id)
        let healthTopic = topics.coordinatorHealth(id: configuration.id)
        let registry = self.registry
        let coordinatorID = configuration.id
        let finalState = await cancelWhenGracefulShutdown { [state] in
            await withDiscardingTaskGroup(returning: CoordinatorState.self) { group in
                group.addTask {
                    // A lost session connection made the broker publish our last will (`offline`): say `online`
                    // again on every reconnection (the first connection has it from above).
                    var connections = 0
                    for await event in sessionEvents {
                        guard case .connected = event else { continue }
                        connections += 1
                        guard connections > 1 else { continue }
                        logger.notice("reconnected to the broker; status online again")
                        do {
                            try session.publish(
                                topic: statusTopic, payload: onlinePayload.payload, qos: .atLeastOnce, retain: true)
                        } catch {
                            logger.warning("could not publish", metadata: ["topic": "\(statusTopic)", "error": "\(error)"])
                        }
                    }
                }
                group.addTask {
                    await CoordinatorService.decode(
                        messages, topics: topics, workers: workers, into: inbox, fobs: self.fobs.map { fobs in (fobs, clock) })
                }
                if let fobs = self.fobs {
                    group.addTask {
                        // Each fob's ids follow its windows: a rotation's new id is in the table before the fob says it.
                        while !Task.isCancelled {
                            try? await clock.sleep(for: fobs.refreshInterval)
                            fobs.refresh(at: clock.now().milliseconds / 1000)
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await clock.sleep(for: CoordinatorService.tickInterval)
                        inbox.requestTick()
                    }
                }
                group.addTask {
                    // Snapshots are retained state, not events: they are made and encoded while decisions go on,
                    // one store at a time with a yield between, so that this task never holds one of the pool's few
                    // threads for long while the decisions or the decoding wait for one (event latency).
                    while let due = await snapshots.next() {
                        for source in due {
                            // Made while the store was decided for: not published once its lease may have run out.
                            if let until = source.decidingUntil, clock.instant() >= until { continue }
                            CoordinatorService.publish(
                                [
                                    Publication(
                                        topic: topics.presence(store: source.store.id), message: .snapshot(source.snapshot()),
                                        qos: .atLeastOnce, retain: true)
                                ], with: publisher, logger: logger)
                            await Task.yield()
                        }
                    }
                }
                if let cache = self.cache {
                    group.addTask { await cache.keepWriting(from: caches, pendingIn: writer, logger: logger) }
                }
                group.addTask {
                    // Others change the registry while we run: read their changes (on a thread of their own: the
                    // database may be slow, locked or away), then hand them to the decisions.
                    let parts = RegistryPoll.Parts(
                        registry: registry, publisher: publisher, topics: topics, writer: writer, inbox: inbox,
                        reachability: reachability, logger: logger,
                        webhooks: webhooks.map { ($0.routes, $0.stores, self.configuration.storeIDs[0]) }, fobs: self.fobs)
                    let feed = RegistryPoll.FeedHolder()
                    await withTaskCancellationHandler {
                        let poll = RegistryPoll(
                            contents: start.contents, coordinatorID: coordinatorID,
                            stores: Set(self.configuration.storeIDs),
                            references: self.configuration.stores.reduce(into: [:]) { references, store in
                                if !store.references.isEmpty { references[store.id] = Set(store.references.map(\.beacon)) }
                            }, feed: feed)
                        do {
                            try await (consume poll).run(with: parts, wait: CoordinatorService.registryPollInterval)
                        } catch {
                            logger.critical("others' registry changes are not read", metadata: ["error": "\(error)"])
                        }
                    } onCancel: {
                        feed.close()
                    }
                }

                // The decisions, one item at a time, until shutdown cancels this task.
                var state = state
                let parts = Performing(
                    publisher: publisher, session: session, writer: writer, snapshots: snapshots, keeper: keeper,
                    leaseHolder: keeper == nil ? nil : coordinatorID,
                    healthTopic: healthTopic, statusTopic: statusTopic, status: onlinePayload, caches: caches, clock: clock, logger: logger,
                    webhooks: webhooks)
                // The Prometheus series, recorded as the decisions say (this task alone touches them).
                var metrics = CoordinatorMetrics()
                while let item = await inbox.next() {
                    let now = clock.now()
                    if let fenced = state.checkLeases(at: clock.instant()) {
                        CoordinatorService.perform(fenced, decidingUntil: state.decidingUntil, with: parts)
                        if !fenced.metrics.isEmpty { metrics.record(fenced.metrics) }
                    }
                    let actions: CoordinatorActions
                    switch item {
                    case .inputs(let inputs):
                        actions = state.handle(inputs, at: now)
                    case .tick:
                        let started = ContinuousClock.now
                        actions = state.tick(at: now, database: reachability.merged(with: writer.status))
                        let took = ContinuousClock.now - started
                        if took > .milliseconds(10) {
                            // Messages wait while a tick is decided: a slow one shows as event latency.
                            logger.log(
                                level: took > .milliseconds(100) ? .warning : .debug, "slow tick",
                                metadata: ["milliseconds": "\(took.wholeMilliseconds)"])
                        }
                    case .membersChanged(let changes):
                        actions = state.membersChanged(changes, at: now)
                    case .surveysChanged(let fits, let baselines):
                        actions = state.surveysChanged(fits, baselines: baselines)
                    case .leasesRenewed(let held, let sentAt, let undecided):
                        actions = state.leasesRenewed(held, sentAt: sentAt, at: now, instant: clock.instant(), undecided: undecided)
                    case .tookOver(let stores, let loaded):
                        actions = state.tookOver(stores, loaded: loaded, at: now, instant: clock.instant())
                    }
                    CoordinatorService.perform(actions, decidingUntil: state.decidingUntil, with: parts)
                    if !actions.metrics.isEmpty { metrics.record(actions.metrics) }
                }
                inbox.close()
                snapshots.close()
                caches.close()
                group.cancelAll()
                return state
            }
        }
        var stopping = finalState
        var lastChanges = stopping.saveVisits().registry
        lastChanges.decidedBy = keeper == nil ? nil : configuration.id
        writer.enqueue(lastChanges)
        await writer.close(timeout: .seconds(5))
        delivering?.cancel()
        await delivering?.value
        if let cache {
            // What the writer could not write is kept for the next start.
            do {
                try cache.write(stopping.cacheContents(at: clock.now()), pendingIn: writer)
            } catch {
                logger.error("cannot write the local cache", metadata: ["error": "\(error)"])
            }
        }
        // The visits are saved: a standby may take the stores over now rather than after the ttl.
        keeper?.stop(release: true)
        await publisher.disconnect(timeout: .seconds(5))
        let offline = CoordinatorStatus(state: .offline, stores: configuration.storeIDs, active: [], startedAt: startedAt)
        await session.disconnect(
            timeout: .seconds(5),
            finalMessage: MQTTMessage(
                topic: topics.coordinatorStatus(id: configuration.id), payload: WireCodec.encode(offline), qos: .atLeastOnce, retained: true
            ))
        logger.info("coordinator stopped")
    }
}
