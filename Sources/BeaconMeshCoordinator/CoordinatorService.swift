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

    /// A start without the database: from the local cache, because the database could not be reached (`cause`).
    public struct ColdStart: Sendable {
        public var cache: CoordinatorCacheDocument
        public var cause: String

        public init(cache: CoordinatorCacheDocument, cause: String) {
            self.cache = cache
            self.cause = cause
        }
    }

    /// How often the engine is ticked (arrival settling, switch dwell, exits, promos) and snapshots are sent.
    static let tickInterval: Duration = .milliseconds(50)
    /// Snapshots go out at most this often per store …
    static let snapshotMinimumInterval: Duration = .milliseconds(250)
    /// … and at least this often. A tick sends at most a fair share of the stores' snapshots (stores × tick ÷
    /// minimum interval), oldest first, so that a chain's snapshots are spread over time rather than made at once.
    static let snapshotRefreshInterval: Duration = .seconds(30)
    /// Open visits are saved as they change (arrive, move, leave); their last-seen times at least this often, a
    /// slice of the members at each tick.
    static let visitSaveInterval: Duration = .seconds(30)
    /// The registry's change feed is waited on at most this long at a time (SQLite's is looked at this often; a
    /// PostgreSQL one answers as soon as a change is announced); the outbox of registry events is checked as often.
    static let registryPollInterval: Duration = .seconds(2)

    /// A coordinator that publishes its health every `healthInterval` (the contract's default: 30 s), with clients
    /// made from `mqttConfigurations(for:)`, reading the time and waiting on `clock`. With `leases` (a shared
    /// PostgreSQL registry's) it decides for the stores whose lease it holds; without, for all its stores. With
    /// `cache`, it keeps its local cache there; with `coldStart`, it starts from that cache instead of the registry.
    public init(
        configuration: CoordinatorConfiguration, registry: any MemberRegistry, leases: (any StoreLeases)? = nil,
        session: any MQTTClientProtocol, publisher: any MQTTClientProtocol, logger: Logger,
        healthInterval: Duration = .seconds(30), clock: any ServiceClock = WallClock(), cache: CoordinatorCacheFile? = nil,
        coldStart: ColdStart? = nil
    ) {
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

    /// Hands publications to the client (which queues them; it never blocks on the network). With `decidingUntil`
    /// (leases), a publication for a store is dropped once the store's lease may have run out: the last fence between a
    /// decision and the network, should the process have been paused in between.
    private static func publish(
        _ publications: [Publication], with client: any MQTTClientProtocol, logger: Logger,
        decidingUntil: [UInt16: ContinuousClock.Instant]? = nil
    ) {
        let now = decidingUntil == nil ? nil : ContinuousClock.now
        for publication in publications {
            if let now, let store = publication.store, !(decidingUntil?[store].map { now < $0 } ?? false) {
                logger.warning("not published: the store's lease ran out", metadata: ["topic": "\(publication.topic)"])
                continue
            }
            do {
                try client.publish(
                    topic: publication.topic, payload: payload(of: publication.message), qos: publication.qos,
                    retain: publication.retain)
            } catch {
                logger.warning("could not publish", metadata: ["topic": "\(publication.topic)", "error": "\(error)"])
            }
        }
    }

    /// The bytes on the wire of what a publication says.
    private static func payload(of message: Publication.Message) -> [UInt8] {
        switch message {
        case .event(let event): WireCodec.encode(event)
        case .offer(let offer): WireCodec.encode(offer)
        case .snapshot(let snapshot): WireCodec.encode(snapshot)
        case .health(let health): WireCodec.encode(health)
        case .encoded(let bytes): bytes
        }
    }

    /// How many messages the decoding side takes from the session at once, at most.
    static let decodingChunk = 64
    /// A chunk this small, with no other chunk being decoded, is decoded by the reading task itself.
    static let inlineChunk = 4

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
                inbox: inbox, logger: logger, clock: { clock.now() })
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
                    await CoordinatorService.decode(messages, topics: topics, workers: workers, into: inbox)
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
                            if let until = source.decidingUntil, ContinuousClock.now >= until { continue }
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
                        reachability: reachability, logger: logger)
                    let feed = RegistryPoll.FeedHolder()
                    await withTaskCancellationHandler {
                        let poll = RegistryPoll(
                            contents: start.contents, coordinatorID: coordinatorID,
                            stores: Set(self.configuration.storeIDs), feed: feed)
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
                    healthTopic: healthTopic, statusTopic: statusTopic, status: onlinePayload, caches: caches, logger: logger)
                while let item = await inbox.next() {
                    let now = clock.now()
                    if let fenced = state.checkLeases(at: .now) {
                        CoordinatorService.perform(fenced, decidingUntil: state.decidingUntil, with: parts)
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
                    case .surveysChanged(let fits):
                        actions = state.surveysChanged(fits)
                    case .leasesRenewed(let held, let sentAt):
                        actions = state.leasesRenewed(held, sentAt: sentAt, at: now, instant: .now)
                    case .tookOver(let stores, let loaded):
                        actions = state.tookOver(stores, loaded: loaded, at: now, instant: .now)
                    }
                    CoordinatorService.perform(actions, decidingUntil: state.decidingUntil, with: parts)
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

    /// What performing the decisions' actions uses.
    private struct Performing: Sendable {
        let publisher: any MQTTClientProtocol
        let session: any MQTTClientProtocol
        let writer: RegistryWriter
        let snapshots: SnapshotMailbox
        let keeper: LeaseKeeper?
        /// With leases, this coordinator's id: the registry writes its visit rows only for stores no other holds.
        let leaseHolder: String?
        let healthTopic: String
        let statusTopic: String
        /// The retained status as last published (said again at every reconnection).
        let status: LatestStatus
        let caches: CacheMailbox
        let logger: Logger
    }

    /// Performs what the decisions returned: publications in order (only while their store's lease holds: until
    /// `decidingUntil`, the decisions' fence), registry changes to the writer, snapshots to their task, the health report with this process's memory,
    /// a changed status (retained, on the session connection that holds the last will), take-overs to the keeper.
    private static func perform(
        _ actions: CoordinatorActions, decidingUntil: [UInt16: ContinuousClock.Instant]?, with parts: Performing
    ) {
        // A promo's offer and a check-in go out once the database has their firing (`Publication.afterWrite`), the
        // rest at once: a greeting never waits for the database.
        let now = actions.publications.filter { !$0.afterWrite }
        let afterWrite = actions.publications.filter(\.afterWrite)
        publish(now, with: parts.publisher, logger: parts.logger, decidingUntil: decidingUntil)
        if !actions.registry.isEmpty || !afterWrite.isEmpty {
            var changes = actions.registry
            changes.decidedBy = parts.leaseHolder
            var published: RegistryWriter.AfterWrite?
            if !afterWrite.isEmpty {
                let publisher = parts.publisher
                let logger = parts.logger
                published = { publish(afterWrite, with: publisher, logger: logger, decidingUntil: decidingUntil) }
            }
            parts.writer.enqueue(changes, afterWrite: published)
        }
        if decidingUntil == nil {
            parts.snapshots.put(actions.snapshots)
        } else {
            parts.snapshots.put(
                actions.snapshots.map { source in
                    var source = source
                    source.decidingUntil = decidingUntil?[source.store.id] ?? .now
                    return source
                })
        }
        if var health = actions.health {
            health.rssBytes = ProcessMemory.residentBytes()
            publish(
                [Publication(topic: parts.healthTopic, message: .health(health), qos: .atMostOnce, retain: false)],
                with: parts.publisher, logger: parts.logger)
        }
        if let status = actions.status {
            let payload = WireCodec.encode(status)
            parts.status.payload = payload
            parts.logger.info("status", metadata: ["active": "\(status.active.map(String.init).joined(separator: ","))"])
            publish(
                [Publication(topic: parts.statusTopic, message: .encoded(payload), qos: .atLeastOnce, retain: true)], with: parts.session,
                logger: parts.logger)
        }
        if !actions.takeOvers.isEmpty { parts.keeper?.load(actions.takeOvers) }
        if let cache = actions.cache { _ = parts.caches.put { $0.waiting = cache } }
    }

    /// Reads the session's messages a chunk at a time (what waits, up to `decodingChunk`), decodes up to `workers`
    /// chunks at once on the concurrency pool, and hands them to `inbox` in arrival order. Ends with the messages.
    static func decode(_ messages: some MessageChunks, topics: Topics, workers: Int, into inbox: DecisionInbox) async {
        var decoding: [Task<[CoordinatorInput], Never>] = []
        while true {
            var chunk = messages.waiting(upTo: decodingChunk)
            if chunk.isEmpty {
                // Nothing new: hand over the oldest chunk being decoded, or wait for messages.
                if !decoding.isEmpty {
                    await inbox.push(await decoding.removeFirst().value)
                    continue
                }
                guard let next = await messages.next(upTo: decodingChunk) else { break }
                chunk = next
            }
            if workers <= 1 || (decoding.isEmpty && chunk.count <= inlineChunk) {
                // One core, or a trickle: decoding here spares a hand-over to another thread (event latency).
                await inbox.push(chunk.map { CoordinatorInput.decode($0, topics: topics) })
                continue
            }
            decoding.append(Task { chunk.map { CoordinatorInput.decode($0, topics: topics) } })
            if decoding.count >= workers { await inbox.push(await decoding.removeFirst().value) }
        }
        for task in decoding { await inbox.push(await task.value) }
    }

    /// How many chunks are decoded at once: the cores this process may run on.
    static func decodingWorkers() -> Int {
        max(1, ProcessInfo.processInfo.activeProcessorCount)
    }
}

/// The coordinator's retained status as last published, said again at every reconnection of the session.
private final class LatestStatus: Sendable {
    private let bytes: Mutex<[UInt8]>

    init(_ payload: [UInt8]) {
        bytes = Mutex(payload)
    }

    var payload: [UInt8] {
        get { bytes.withLock { $0 } }
        set { bytes.withLock { $0 = newValue } }
    }
}
