import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// The coordinator's decisions: feed it decoded messages, ticks and registry changes with the time, get back the
/// actions that follow (events, offers and snapshots to publish, registry changes to write, health to report).
///
/// A state machine in the manner of STYLE example 5: it holds the presence engine and what turns the engine's outputs
/// into the contract's events, and does no I/O — it neither reads the clock, nor decodes, publishes or touches the
/// database. `CoordinatorService` feeds it in arrival order and performs what it returns.
///
/// With a shared PostgreSQL registry it decides only for the stores whose lease it holds (`active`), as its
/// `LeaseBook` says at the monotonic time it is given; for the others it stands by: their sightings keep its engine
/// warm, and nothing of theirs is published or written. A store's lease gained makes it take the store over from
/// what the registry holds (`TakeOver`); a lease that runs out makes it stand by at once.
///
/// This file holds its state, its start, the routing of inputs and the tick; each concern is a file of `Decisions/`
/// (leases, visits and greetings, check-ins, promos, snapshots and health, the registry, surveys, the local cache).
struct CoordinatorState {
    let configuration: CoordinatorConfiguration
    let logger: Logger
    let topics: Topics
    let startedAt: Timestamp
    let healthInterval: Duration
    /// How often it is ticked, and what it does per tick.
    let timings: DecisionTimings

    var engine: PresenceEngine
    var profiles: [String: MemberProfile] = [:]
    var promoFires: [String: [String: Timestamp]] = [:]
    /// Check-in requests handled in the last `checkinMemory`, by id: each is counted once, however often delivered.
    var handledCheckins: [String: Timestamp] = [:]
    var lastCheckinPrune: Timestamp
    var drops = DropCounter()
    var eventsPublished: UInt64 = 0
    /// What has been decided and not yet handed out (each public method returns it).
    var actions = CoordinatorActions()
    /// How the registry writer is doing, as the caller last said (for health).
    var database = RegistryWriter.Status(queued: 0)
    var dirtyStores: Set<UInt16> = []
    var lastSnapshot: [UInt16: Timestamp] = [:]
    var lastHealth: Timestamp
    /// Whether the last health published said the database was failing.
    var healthSaidFailing = false
    /// The next member slot whose visit the periodic save writes.
    var visitSaveCursor = 0
    var eventCounter: UInt64 = 0
    /// Event ids are `{eventPrefix}-{counter}`: the prefix is new at every start, so ids never repeat.
    let eventPrefix: String
    /// The stores with a promo in any department: promos are checked for them at every tick.
    let promoStores: Set<UInt16>
    /// When the Prometheus series last followed the health figures (`CoordinatorActions.metrics`).
    var metricsUpdatedAt: Timestamp?
    /// The stores' leases; `nil`: every store is held for good (a SQLite registry has one coordinator).
    var leases: LeaseBook?
    /// The stores it decides for now.
    var active: Set<UInt16>
    /// Since when it has decided for each active store (without leases: since it started).
    var activeSince: [UInt16: Timestamp] = [:]
    /// Stores whose take-over the shell is loading.
    var loading: Set<UInt16> = []
    /// Check-in requests for stores it stands by for, kept `standbyCheckinMemory`: those the previous holder did not
    /// handle (it died before) are handled at the take-over.
    var standbyCheckins: [(request: CheckinRequest, store: UInt16, at: Timestamp)] = []
    /// How long check-in requests for a store stood by for are kept.
    static let standbyCheckinMemory: Duration = .seconds(30)
    /// The member visits going on, as the history keeps them.
    var journal = VisitJournal()
    /// When history older than `retention.visits` was last deleted (`nil`: not yet, so the first tick does it).
    var lastRetentionRun: Timestamp?
    /// How often the retention runs.
    static let retentionInterval: Duration = .seconds(3600)
    /// Surveyors' beacons marked in a department, sampled about once a second.
    var surveyMarks = SurveyMarks()
    var referenceSamples: ReferenceSamples
    var referenceDrift = ReferenceDrift()
    /// The surveyed stores whose survey no longer fits, as the last health report said (each is logged once).
    var staleSurveys: Set<UInt16> = []
    /// The survey fits decided from, by store (for the local cache).
    var surveys: [UInt16: SurveyFit] = [:]
    /// When the local cache is next due (`configuration.cache`).
    var cacheSchedule = CacheSchedule()
    /// The config's alert rules and what they remember (`Decisions/CoordinatorState+Alerts.swift`).
    var alertBook: AlertBook

    /// A state that starts from `start` at `startedAt`; its event ids begin with `eventPrefix` (by default the
    /// coordinator's id, `/`, and a random part new at every start, so that an event names who published it).
    /// With `leaseTTL` it decides for no store until it holds the store's lease; without, for every store.
    init(
        configuration: CoordinatorConfiguration, start: Start, logger: Logger, topics: Topics, startedAt: Timestamp,
        healthInterval: Duration, eventPrefix: String? = nil, leaseTTL: Duration? = nil, timings: DecisionTimings = .standard
    ) {
        self.timings = timings
        self.alertBook = AlertBook(rules: configuration.alerts)
        self.healthInterval = healthInterval
        self.configuration = configuration
        self.logger = logger
        self.topics = topics
        self.startedAt = startedAt
        self.eventPrefix = eventPrefix ?? (configuration.id + "/" + RandomID.make(hexDigits: 8))
        if let leaseTTL {
            var book = LeaseBook(ttl: leaseTTL)
            let cached = (start.cachedLeases ?? [:]).filter { !$0.value.fenced && configuration.store($0.key) != nil }
            book.renewed(cached, sentAt: .now)
            leases = book
            active = Set(cached.keys)
            for (store, lease) in cached { activeSince[store] = lease.since }
        } else {
            active = Set(configuration.storeIDs)
            for store in active { activeSince[store] = startedAt }
        }
        promoStores = Set(configuration.stores.filter { $0.departments.contains { $0.promo != nil } }.map(\.id))
        var stores: [UInt16: [DepartmentLayout]] = [:]
        for store in configuration.stores {
            stores[store.id] = store.departments.map(\.layout)
        }
        engine = PresenceEngine(rules: configuration.presence, stores: stores)
        _ = engine.setDirectory(start.contents.beaconOwners, members: start.contents.profiles.keys)
        referenceSamples = ReferenceSamples(stores: configuration.stores)
        engine.setReferences(Set(referenceSamples.placed.keys))
        lastCheckinPrune = startedAt
        for id in start.handledCheckins { handledCheckins[id] = startedAt }
        profiles = start.contents.profiles
        promoFires = start.contents.promoFires
        engine.restore(start.visits)
        surveyMarks.restore(start.surveyMarks.filter { configuration.store($0.store) != nil })
        for (store, fit) in start.surveys where configuration.store(store) != nil {
            engine.setSurvey(fit, store: store)
            surveys[store] = fit
        }
        let names = configuration
        journal.restore(
            start.history, visits: start.visits.filter { configuration.store($0.store) != nil },
            visitNumbers: start.contents.profiles.mapValues(\.visits),
            name: { store, department in names.store(store)?.department(department)?.name ?? "Department \(department)" })
        lastHealth = startedAt
        dirtyStores = Set(configuration.storeIDs)
        alertRules(restore: start.visits.filter { active.contains($0.store) })
        logger.info(
            "registry loaded",
            metadata: [
                "members": "\(profiles.count)", "openVisits": "\(start.visits.filter { $0.leftAt == nil }.count)",
            ])
    }

    /// Hands out what has been decided since the last call.
    mutating func takeActions() -> CoordinatorActions {
        // A store stood by for counts its guests where it is decided, not here.
        for guest in engine.takeGuestVisits() where leases == nil || active.contains(guest.store) {
            actions.registry.countGuest(guest)
        }
        cacheSchedule.changed(actions.registry)
        defer { actions = CoordinatorActions() }
        return actions
    }

    // MARK: Input

    /// Decides on `inputs`, in order, all received at `now`: sighting batches and ranging reports drive the
    /// presence engine, node statuses its node states, check-in requests are accepted or refused; refused messages
    /// are counted by reason (and logged once per reason).
    mutating func handle(_ inputs: some Sequence<CoordinatorInput>, at now: Timestamp) -> CoordinatorActions {
        for input in inputs { handle(input, at: now) }
        return takeActions()
    }

    mutating func handle(_ input: CoordinatorInput, at now: Timestamp) {
        switch input {
        case .sightings(let batch):
            let (verdict, outputs) = engine.ingest(batch, at: now)
            if verdict == .unknownStore {
                drops.drop(
                    reason: "unknown-store", topic: topics.sightings(batch.node),
                    detail: "store \(batch.node.store) is not served here", at: now, logger: logger)
            }
            apply(outputs, at: now)
        case .ranging(let report, let store):
            let (verdict, outputs) = engine.ingest(report, store: store, at: now)
            switch verdict {
            case .applied, .duplicate, .late: break
            case .unknownStore:
                drops.drop(
                    reason: "unknown-store", topic: topics.ranging(store: store, member: report.member),
                    detail: "store \(store) is not served here", at: now, logger: logger)
            case .unknownMember:
                drops.drop(
                    reason: "unknown-member", topic: topics.ranging(store: store, member: report.member),
                    detail: "the registry has no member \(report.member)", at: now, logger: logger)
            }
            apply(outputs, at: now)
        case .checkin(let request, let store):
            if active.contains(store) {
                checkIn(request, store: store, at: now)
            } else {
                standbyCheckins.append((request, store, now))
            }
        case .nodeStatus(let node, let status, let retained):
            let boot = status.boot.isEmpty ? nil : status.boot
            if retained {
                engine.restoreNode(node, state: status.state, boot: boot)
                dirtyStores.insert(node.store)
            } else {
                apply(engine.nodeStatusChanged(node, state: status.state, boot: boot, at: now), at: now)
            }
        case .surveyMark(let mark, let store):
            let beacons: [BeaconKey]
            switch mark.carried {
            case .beacon(let beacon): beacons = [beacon]
            case .member(let member): beacons = engine.beacons(of: member)
            }
            if let refused = surveyMarks.take(mark, beacons: beacons, store: configuration.store(store), storeID: store, at: now) {
                drops.drop(reason: refused.reason, topic: topics.survey(store: store), detail: refused.detail, at: now, logger: logger)
            } else if active.contains(store) {
                // Kept by the store's holder, so that a restart or a take-over goes on sampling the beacon.
                for beacon in beacons {
                    let key = SurveyMarkRecord.Key(store: store, beacon: beacon)
                    if mark.stop {
                        actions.registry.endMark(key)
                    } else {
                        actions.registry.keep(SurveyMarkRecord(store: store, beacon: beacon, department: mark.department, since: now))
                    }
                }
            }
        case .ignored:
            break
        case .refused(let reason, let topic, let detail):
            drops.drop(reason: reason, topic: topic, detail: detail, at: now, logger: logger)
        }
    }

    /// Advances time to `now`: engine tick (arrival settling, switch dwell, exits), promos, snapshots, health, visit
    /// saving. `database` is how the registry writer is doing now (health reports it).
    mutating func tick(at now: Timestamp, database: RegistryWriter.Status = .init(queued: 0)) -> CoordinatorActions {
        self.database = database
        apply(engine.tick(at: now), at: now)
        for (member, store) in engine.expireVisitsByStore(at: now) where active.contains(store) {
            actions.registry.endVisit(of: member)
            journal.ended(member: member)
        }
        forgetOldHistory(at: now)
        pruneCheckins(at: now)
        sampleSurveys(at: now)
        tickAlerts(at: now)
        if let oldest = standbyCheckins.first, now - oldest.at > Self.standbyCheckinMemory {
            standbyCheckins.removeAll { now - $0.at > Self.standbyCheckinMemory }
        }
        let snapshotStores = storesDueForSnapshot(at: now)
        let promoting = leases == nil ? promoStores : promoStores.intersection(active)
        firePromos(promoting.isEmpty ? [:] : engine.presentMembersByStore(in: promoting), at: now)
        // Unsorted: the snapshot's task sorts its members, so a tick (which messages wait for) does not.
        let present = snapshotStores.isEmpty ? [:] : engine.presentMembersByStore(in: snapshotStores, sorted: false)
        publishSnapshots(of: snapshotStores, present: present, at: now)
        saveVisitSlice()
        if configuration.cache != nil, cacheSchedule.isDue(at: now) {
            cacheSchedule.saved(at: now)
            actions.cache = cacheContents(at: now)
        }
        // Due, or at once when the database fails or is back (health is how an operator learns of it).
        if now - lastHealth >= healthInterval || (database.failure != nil) != healthSaidFailing {
            lastHealth = now
            healthSaidFailing = database.failure != nil
            publishHealth(at: now)
        }
        if metricsUpdatedAt.map({ now - $0 >= CoordinatorMetrics.interval }) ?? true {
            metricsUpdatedAt = now
            actions.metrics.totals = .init(
                batches: engine.counters.batches, sightings: engine.counters.sightings, dropped: droppedCounts(),
                tracked: engine.trackedCount)
        }
        return takeActions()
    }
}
