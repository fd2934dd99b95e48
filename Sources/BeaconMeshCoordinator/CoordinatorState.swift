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
struct CoordinatorState {
    let configuration: CoordinatorConfiguration
    let logger: Logger
    let topics: Topics
    let startedAt: Timestamp
    let healthInterval: Duration

    private(set) var engine: PresenceEngine
    private(set) var profiles: [String: MemberProfile] = [:]
    private(set) var promoFires: [String: [String: Timestamp]] = [:]
    /// Check-in requests handled in the last `checkinMemory`, by id: each is counted once, however often delivered.
    private(set) var handledCheckins: [String: Timestamp] = [:]
    private var lastCheckinPrune: Timestamp
    private var drops = DropCounter()
    private var eventsPublished: UInt64 = 0
    /// What has been decided and not yet handed out (each public method returns it).
    private var actions = CoordinatorActions()
    /// How the registry writer is doing, as the caller last said (for health).
    private var database = RegistryWriter.Status(queued: 0)
    private var dirtyStores: Set<UInt16> = []
    private var lastSnapshot: [UInt16: Timestamp] = [:]
    private var lastHealth: Timestamp
    /// Whether the last health published said the database was failing.
    private var healthSaidFailing = false
    /// The next member slot whose visit the periodic save writes.
    private var visitSaveCursor = 0
    private var eventCounter: UInt64 = 0
    /// Event ids are `{eventPrefix}-{counter}`: the prefix is new at every start, so ids never repeat.
    private let eventPrefix: String
    /// The stores with a promo in any department: promos are checked for them at every tick.
    private let promoStores: Set<UInt16>
    /// The Prometheus series (recorded through swift-metrics), and when they last followed the health figures.
    private var metrics = CoordinatorMetrics()
    private var metricsUpdatedAt: Timestamp?
    /// The stores' leases; `nil`: every store is held for good (a SQLite registry has one coordinator).
    private(set) var leases: LeaseBook?
    /// The stores it decides for now.
    private(set) var active: Set<UInt16>
    /// Since when it has decided for each active store (without leases: since it started).
    private(set) var activeSince: [UInt16: Timestamp] = [:]
    /// Stores whose take-over the shell is loading.
    private var loading: Set<UInt16> = []
    /// Check-in requests for stores it stands by for, kept `standbyCheckinMemory`: those the previous holder did not
    /// handle (it died before) are handled at the take-over.
    private var standbyCheckins: [(request: CheckinRequest, store: UInt16, at: Timestamp)] = []
    /// How long check-in requests for a store stood by for are kept.
    static let standbyCheckinMemory: Duration = .seconds(30)
    /// The member visits going on, as the history keeps them.
    private var journal = VisitJournal()
    /// When history older than `retention.visits` was last deleted (`nil`: not yet, so the first tick does it).
    private var lastRetentionRun: Timestamp?
    /// How often the retention runs.
    static let retentionInterval: Duration = .seconds(3600)
    /// Surveyors' beacons marked in a department, sampled about once a second.
    private var surveyMarks = SurveyMarks()
    /// The surveyed stores whose survey no longer fits, as the last health report said (each is logged once).
    private var staleSurveys: Set<UInt16> = []
    /// The survey fits decided from, by store (for the local cache).
    var surveys: [UInt16: SurveyFit] = [:]
    /// When the local cache is next due (`configuration.cache`).
    var cacheSchedule = CacheSchedule()

    /// What the state starts from, as the registry held it at start.
    struct Start: Sendable {
        /// Members, beacon owners and promo history.
        var contents: RegistryContents
        /// Visits open (or recently left) at the last stop.
        var visits: [PresenceEngine.Visit]
        /// Ids of check-in requests handled within `checkinMemory`.
        var handledCheckins: Set<String>
        /// The visits the history keeps as going on (those of `visits` go on being written under the same key).
        var history: [VisitRecord] = []
        /// The survey fits of the stores that have one.
        var surveys: [UInt16: SurveyFit] = [:]
        /// Started from the local cache (the database could not be reached): the leases held when it was saved. Those
        /// nobody stood by for are decided at once, as they were; the database keeps them for their holder.
        var cachedLeases: [CoordinatorCacheDocument.HeldLease]? = nil

        /// Reads what a state starts from out of `registry` (at `now`).
        static func read(from registry: any MemberRegistry, stores: Set<UInt16>? = nil, at now: Timestamp) throws -> Start {
            var surveys: [UInt16: SurveyFit] = [:]
            if let registry = registry as? any SurveyRegistry, let stores {
                // A fit that cannot be read leaves its store uncalibrated; the registry poll logs why at its first look.
                for store in try registry.surveyFitVersions(stores: stores).keys {
                    surveys[store] = (try? registry.surveyFit(store: store)) ?? nil
                }
            }
            return Start(
                contents: try registry.contents(), visits: try registry.loadVisits(stores: stores),
                handledCheckins: try registry.checkinRequests(since: now - CoordinatorState.checkinMemory),
                history: try registry.openHistory(stores: stores), surveys: surveys)
        }
    }

    /// A state that starts from `start` at `startedAt`; its event ids begin with `eventPrefix` (by default the
    /// coordinator's id, `/`, and a random part new at every start, so that an event names who published it).
    /// With `leaseTTL` it decides for no store until it holds the store's lease; without, for every store.
    init(
        configuration: CoordinatorConfiguration, start: Start, logger: Logger, topics: Topics, startedAt: Timestamp,
        healthInterval: Duration, eventPrefix: String? = nil, leaseTTL: Duration? = nil
    ) {
        self.healthInterval = healthInterval
        self.configuration = configuration
        self.logger = logger
        self.topics = topics
        self.startedAt = startedAt
        self.eventPrefix = eventPrefix ?? (configuration.id + "/" + RandomID.make(hexDigits: 8))
        if let leaseTTL {
            var book = LeaseBook(ttl: leaseTTL)
            let cached = (start.cachedLeases ?? []).filter { !$0.fenced && configuration.store($0.store) != nil }
            book.renewed(
                Dictionary(uniqueKeysWithValues: cached.map { ($0.store, LeaseGrant(since: $0.since, fenced: false)) }), sentAt: .now)
            leases = book
            active = Set(cached.map(\.store))
            for lease in cached { activeSince[lease.store] = lease.since }
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
        lastCheckinPrune = startedAt
        for id in start.handledCheckins { handledCheckins[id] = startedAt }
        profiles = start.contents.profiles
        promoFires = start.contents.promoFires
        engine.restore(start.visits)
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
        logger.info(
            "registry loaded",
            metadata: [
                "members": "\(profiles.count)", "openVisits": "\(start.visits.filter { $0.leftAt == nil }.count)",
            ])
    }

    /// Hands out what has been decided since the last call.
    private mutating func takeActions() -> CoordinatorActions {
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

    private mutating func handle(_ input: CoordinatorInput, at now: Timestamp) {
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
            if let refused = surveyMarks.take(mark, store: configuration.store(store), storeID: store, at: now) {
                drops.drop(reason: refused.reason, topic: topics.survey(store: store), detail: refused.detail, at: now, logger: logger)
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
            metrics.update(
                batches: engine.counters.batches, sightings: engine.counters.sightings, dropped: droppedCounts(),
                tracked: engine.trackedCount)
        }
        return takeActions()
    }

    // MARK: Surveys

    /// Keeps about once a second what the nodes hear of each surveyor's beacon marked in a department of a store
    /// decided here, as the store's survey samples (written by the registry writer, off the path to events).
    private mutating func sampleSurveys(at now: Timestamp) {
        var marks = surveyMarks
        let samples = marks.samples(
            at: now, deciding: { store in leases == nil || active.contains(store) },
            readings: { beacon, store in engine.surveyReadings(of: beacon, store: store, at: now) })
        surveyMarks = marks
        if !samples.isEmpty { actions.registry.addSurveySamples(samples) }
    }

    /// Decides the stores in `fits` from their new fit (`nil`: the survey was cleared) from now on.
    mutating func surveysChanged(_ fits: [UInt16: SurveyFit?]) -> CoordinatorActions {
        for (store, fit) in fits.sorted(by: { $0.key < $1.key }) where configuration.store(store) != nil {
            engine.setSurvey(fit, store: store)
            surveys[store] = fit
            cacheSchedule.changedSoon()
            if let fit {
                logger.notice(
                    "deciding a store from its survey",
                    metadata: ["store": "\(store)", "fittedAt": "\(fit.fittedAt.milliseconds)", "accuracy": "\(fit.accuracy)"])
            } else {
                logger.notice("the store's survey was cleared: deciding it by the uncalibrated rules", metadata: ["store": "\(store)"])
            }
        }
        return takeActions()
    }

    /// The surveyed stores decided here, with how well live readings fit their survey.
    private func surveyHealth() -> [SurveyStatus] {
        configuration.storeIDs.sorted().compactMap { surveyStatus(of: $0) }
    }

    /// How `store`'s survey is doing, if it is surveyed and decided here.
    private func surveyStatus(of store: UInt16) -> SurveyStatus? {
        guard leases == nil || active.contains(store), let fit = engine.survey(of: store), let state = engine.surveyFitness(of: store)
        else { return nil }
        return SurveyStatus(
            store: store, fittedAt: fit.fittedAt, accuracy: fit.accuracy, checks: state.checks, share: state.share, stale: state.isStale)
    }

    // MARK: Leases

    /// The coordinator's retained status: its stores, and those it decides for now.
    var status: CoordinatorStatus {
        CoordinatorStatus(state: .online, stores: configuration.storeIDs, active: active.sorted(), startedAt: startedAt)
    }

    /// Until when (monotonic) each store it decides for may still be decided for; `nil` without leases.
    var decidingUntil: [UInt16: ContinuousClock.Instant]? { leases?.validUntil }

    /// What the registry holds of stores being taken over, read by the shell when `CoordinatorActions.takeOvers`
    /// asks: their saved visits, the promo history and the check-in requests handled lately.
    struct TakeOver: Sendable {
        var stores: Set<UInt16>
        var visits: [PresenceEngine.Visit]
        var promoFires: [String: [String: Timestamp]]
        var handledCheckins: Set<String>
        /// The visits the history keeps as going on in `stores` (the take-over goes on writing them under their key).
        var history: [VisitRecord] = []

        /// Reads what taking `stores` over needs out of `registry` (at `now`).
        static func read(stores: Set<UInt16>, from registry: any MemberRegistry, at now: Timestamp) throws -> TakeOver {
            TakeOver(
                stores: stores, visits: try registry.loadVisits(stores: stores), promoFires: try registry.promoFires(),
                handledCheckins: try registry.checkinRequests(since: now - CoordinatorState.checkinMemory),
                history: try registry.openHistory(stores: stores))
        }
    }

    /// Takes the answer to a lease renewal sent at `sentAt` (`held`: the stores the database says it holds, with
    /// since when and whether to fence), at `now` (`instant` on the monotonic clock): stores no longer held are stood by for; stores newly
    /// held are to be taken over (`takeOvers`: the shell loads them).
    mutating func leasesRenewed(
        _ held: [UInt16: LeaseGrant], sentAt: ContinuousClock.Instant, at now: Timestamp, instant: ContinuousClock.Instant
    ) -> CoordinatorActions {
        guard var book = leases else { return takeActions() }
        book.renewed(held, sentAt: sentAt)
        leases = book
        for (store, grant) in held where active.contains(store) { activeSince[store] = grant.since }
        standDown(at: instant)
        let wanted = book.held(at: instant).subtracting(active).subtracting(loading)
        if !wanted.isEmpty {
            loading.formUnion(wanted)
            actions.takeOvers = wanted
        }
        return takeActions()
    }

    /// Fencing, before anything is decided at `instant` (monotonic): the stores whose lease may have run out are stood
    /// by for at once, whether or not a renewal came (the database may be away, the process may have been paused).
    mutating func checkLeases(at instant: ContinuousClock.Instant) -> CoordinatorActions? {
        guard let next = leases?.nextExpiry, next <= instant else { return nil }
        standDown(at: instant)
        return takeActions()
    }

    private mutating func standDown(at instant: ContinuousClock.Instant) {
        guard var book = leases else { return }
        _ = book.expire(at: instant)
        leases = book
        let lost = active.filter { !book.holds($0, at: instant) }
        guard !lost.isEmpty else { return }
        for store in lost.sorted() {
            active.remove(store)
            activeSince[store] = nil
            cacheSchedule.changedSoon()
            logger.warning("lease lost: standing by", metadata: ["store": "\(store)"])
        }
        actions.status = status
    }

    /// Takes over the stores the shell loaded (`loaded`; `nil`: reading them failed, they are asked for again at the
    /// next renewal) at `now` (`instant` on the monotonic clock), if their lease is still held: the store continues as a
    /// restart continues it — the registry's visits (with what this standby heard since), promo history and handled
    /// check-ins — and the check-in requests that came while nobody decided are handled now.
    mutating func tookOver(
        _ stores: Set<UInt16>, loaded: TakeOver?, at now: Timestamp, instant: ContinuousClock.Instant
    ) -> CoordinatorActions {
        loading.subtract(stores)
        guard let loaded, let book = leases else { return takeActions() }
        for (member, promos) in loaded.promoFires where profiles[member] != nil {
            for (promo, time) in promos where (promoFires[member]?[promo]).map({ $0 < time }) ?? true {
                promoFires[member, default: [:]][promo] = time
            }
        }
        for id in loaded.handledCheckins where handledCheckins[id] == nil { handledCheckins[id] = now }
        var taken: Set<UInt16> = []
        for store in loaded.stores.sorted() where book.holds(store, at: instant) && !active.contains(store) {
            let visits = loaded.visits.filter { $0.store == store }
            engine.takeOver(store: store, visits: visits)
            // The history of the visits going on continues as a restart continues it.
            let names = configuration
            journal.restore(
                loaded.history.filter { $0.store == store }, visits: visits, visitNumbers: profiles.mapValues(\.visits),
                name: { store, department in names.store(store)?.department(department)?.name ?? "Department \(department)" })
            active.insert(store)
            activeSince[store] = book.since[store] ?? now
            dirtyStores.insert(store)
            lastSnapshot[store] = nil
            taken.insert(store)
            cacheSchedule.changedSoon()
            logger.notice("lease taken: deciding", metadata: ["store": "\(store)"])
        }
        guard !taken.isEmpty else { return takeActions() }
        actions.status = status
        let waiting = standbyCheckins
        standbyCheckins.removeAll { taken.contains($0.store) }
        for (request, store, at) in waiting where taken.contains(store) && now - at <= Self.standbyCheckinMemory {
            checkIn(request, store: store, at: now)
        }
        return takeActions()
    }

    // MARK: Engine outputs

    private mutating func apply(_ outputs: [PresenceEngine.Output], at now: Timestamp) {
        for output in outputs {
            // A store stood by for: the engine stays warm, and nothing of it is published, counted or written.
            if leases != nil, let store = output.store, !active.contains(store) { continue }
            switch output {
            case .arrived(let member, let store, let department, let at, let evidence):
                guard let (profile, visit) = countVisit(member: member, at: at) else { continue }
                actions.registry.record(
                    journal.arrived(
                        member: member, store: store, department: department, name: departmentName(store, department),
                        number: visit.number, at: at))
                let template = configuration.store(store)?.greeting(forVisit: visit.number) ?? .standard
                let greeting = template.render(for: profile, visit: visit.number)
                publish(
                    event: .arrived(
                        member: profile, department: department, departmentName: departmentName(store, department),
                        visit: visit, greeting: greeting, evidence: evidence), store: store, at: at)
            case .resumed(let member, let store, let department, let at):
                keep(journal.resumed(member: member, department: department, name: departmentName(store, department), at: at))
            case .moved(let member, let store, let from, let to, let at, let evidence):
                guard let profile = profiles[member] else { continue }
                keep(journal.moved(member: member, to: to, name: departmentName(store, to), at: at))
                publish(
                    event: .moved(
                        member: profile, from: from, to: to, fromName: departmentName(store, from),
                        toName: departmentName(store, to), evidence: evidence), store: store, at: at)
            case .left(let member, let store, let department, let dwell, let at):
                keep(journal.left(member: member, dwell: dwell))
                guard let profile = profiles[member] else { continue }
                publish(
                    event: .left(member: profile, department: department, dwellSeconds: Int((dwell.wholeMilliseconds + 500) / 1000)),
                    store: store, at: at)
            case .node(let node, let state, let at):
                publish(event: .node(department: node.department, node: node.node, state: state), store: node.store, at: at)
            case .presenceChanged(let store):
                dirtyStores.insert(store)
            case .visitChanged(let visit):
                actions.registry.save(visit)
            }
        }
    }

    /// Hands a visit of the journal to the registry writer for the history.
    private mutating func keep(_ record: VisitRecord?) {
        if let record { actions.registry.record(record) }
    }

    /// Deletes member visit history older than `retention.visits`: at the first tick and then every hour.
    private mutating func forgetOldHistory(at now: Timestamp) {
        // A coordinator that decides for no store (it stands by for all) leaves the registry to those that do.
        guard leases == nil || !active.isEmpty else { return }
        guard lastRetentionRun.map({ now - $0 >= Self.retentionInterval }) ?? true else { return }
        lastRetentionRun = now
        actions.registry.forgetHistory(before: now - configuration.retention.visits)
    }

    /// Counts the visit in memory (the count goes to the registry writer with the open visit, which the engine's
    /// `visitChanged` output that follows carries) and returns the member as the event shows them.
    private mutating func countVisit(member: String, at time: Timestamp) -> (MemberProfile, VisitNumber)? {
        guard var profile = profiles[member] else { return nil }
        let visit = VisitNumber(number: profile.visits + 1, previousAt: profile.lastVisitAt)
        profile.visits = visit.number
        profile.lastVisitAt = time
        profiles[member] = profile
        actions.registry.countVisit(of: member, at: time)
        return (profile, visit)
    }

    private func departmentName(_ store: UInt16, _ department: UInt16) -> String {
        configuration.store(store)?.department(department)?.name ?? "Department \(department)"
    }

    private mutating func nextID() -> String {
        eventCounter += 1
        return "\(eventPrefix)-\(eventCounter)"
    }

    /// Publishes an event on the store's events topic; returns the event.
    @discardableResult
    private mutating func publish(event kind: StoreEvent.Kind, store: UInt16, at: Timestamp, afterWrite: Bool = false) -> StoreEvent {
        let event = StoreEvent(id: nextID(), store: store, at: at, kind: kind)
        eventsPublished += 1
        metrics.countEvent(type: event.type)
        actions.publications.append(
            Publication(
                topic: topics.events(store: store), message: .event(event), qos: .atLeastOnce, retain: false, store: store,
                afterWrite: afterWrite))
        logger.info("event", metadata: ["type": "\(event.type)", "store": "\(store)", "member": "\(event.member?.id ?? "-")"])
        return event
    }

    // MARK: Check-ins

    /// How long handled check-in request ids are remembered.
    static let checkinMemory: Duration = .seconds(7 * 24 * 3600)
    /// How recently a member must have been heard near the till.
    static let checkinWindow: Duration = .seconds(5)

    /// Decides a till's check-in request: counted once per id; accepted for a member heard `immediate` or `near` in
    /// that till department within the last 5 s; the `checkin` event goes to the store and to the member's
    /// `checkins` topic, a `checkin-refused` event to the store.
    private mutating func checkIn(_ request: CheckinRequest, store storeID: UInt16, at now: Timestamp) {
        guard handledCheckins[request.id] == nil else { return }
        guard let store = configuration.store(storeID) else { return }
        handledCheckins[request.id] = now
        actions.registry.handledCheckinRequest(request.id, at: now)
        func refuse(_ reason: CheckinRefusal) {
            publish(
                event: .checkinRefused(request: request.id, member: request.member, department: request.department, reason: reason),
                store: storeID, at: now)
        }
        guard let department = store.department(request.department), department.till else { return refuse(.notATill) }
        guard var profile = profiles[request.member] else { return refuse(.unknownMember) }
        guard engine.heardNear(member: request.member, store: storeID, department: department.id, within: Self.checkinWindow, at: now)
        else { return refuse(.notNearTill) }
        profile.checkins += 1
        profiles[request.member] = profile
        actions.registry.countCheckin(of: profile.id)
        if journal.visit(of: profile.id)?.store == storeID {
            keep(journal.checkedIn(member: profile.id, department: department.id, at: now))
        }
        let event = publish(
            event: .checkin(
                member: profile, department: department.id, departmentName: department.name,
                request: request.id, checkins: profile.checkins, verified: false),
            store: storeID, at: now, afterWrite: true)
        actions.publications.append(
            Publication(
                topic: topics.checkins(member: profile.id), message: .event(event), qos: .atLeastOnce, retain: false,
                store: storeID, afterWrite: true))
    }

    /// Forgets handled check-in requests older than `checkinMemory`, once an hour.
    private mutating func pruneCheckins(at now: Timestamp) {
        guard now - lastCheckinPrune >= .seconds(3600) else { return }
        lastCheckinPrune = now
        let before = now - Self.checkinMemory
        handledCheckins = handledCheckins.filter { $0.value >= before }
        actions.registry.forgetCheckinRequests(before: before)
    }

    // MARK: Promos

    private mutating func firePromos(_ present: [UInt16: [PresenceEngine.Visit]], at now: Timestamp) {
        guard !present.isEmpty else { return }
        let (day, minute) = LocalCalendar.dayAndMinute(of: now)
        for store in configuration.stores where promoStores.contains(store.id) {
            // A member whose department is unknown gets no department's promo: no event is published for them.
            for visit in present[store.id] ?? [] where !visit.departmentUnknown {
                guard let department = store.department(visit.department), let rule = department.promo,
                    let profile = profiles[visit.member]
                else { continue }
                let eligibility = PromoEligibility(
                    proximity: rule.proximity, dwell: rule.dwell ?? configuration.promos.dwell,
                    cooldown: configuration.promos.cooldown)
                let last = promoFires[visit.member]?[rule.promo.id]
                guard eligibility.shouldFire(for: visit, lastFiredAt: last, at: now),
                    rule.window.check(day: day, minute: minute).open,
                    rule.audience.includes(member: visit.member, visits: profile.visits, checkins: profile.checkins)
                else { continue }
                promoFires[visit.member, default: [:]][rule.promo.id] = now
                actions.registry.promoFired(rule.promo.id, member: visit.member, store: store.id, at: now)
                keep(journal.offered(member: visit.member, promo: rule.promo.id, department: department.id, at: now))
                publish(
                    event: .promo(member: profile, department: department.id, departmentName: department.name, promo: rule.promo),
                    store: store.id, at: now, afterWrite: true)
                let offer = Offer(
                    id: nextID(), member: visit.member, store: store.id, department: department.id,
                    departmentName: department.name, promo: rule.promo, at: now)
                actions.publications.append(
                    Publication(
                        topic: topics.offers(member: visit.member), message: .offer(offer),
                        qos: .atLeastOnce, retain: false, store: store.id, afterWrite: true))
            }
        }
    }

    // MARK: Snapshots, health, persistence

    /// The stores whose snapshot goes out at this tick: changed ones at most every `snapshotMinimumInterval`, the
    /// others every `snapshotRefreshInterval`; the longest waiting first, no more than a fair share per tick.
    private func storesDueForSnapshot(at now: Timestamp) -> Set<UInt16> {
        var due: [(store: UInt16, last: Timestamp?)] = []
        for store in configuration.storeIDs where active.contains(store) {
            let last = lastSnapshot[store]
            guard let last else {
                due.append((store, nil))
                continue
            }
            let age = now - last
            if age >= CoordinatorService.snapshotRefreshInterval
                || dirtyStores.contains(store) && age >= CoordinatorService.snapshotMinimumInterval
            {
                due.append((store, last))
            }
        }
        let share =
            (configuration.storeIDs.count * Int(CoordinatorService.tickInterval.wholeMilliseconds)
                + Int(CoordinatorService.snapshotMinimumInterval.wholeMilliseconds) - 1)
            / Int(CoordinatorService.snapshotMinimumInterval.wholeMilliseconds)
        guard due.count > share else { return Set(due.map(\.store)) }
        due.sort { ($0.last?.milliseconds ?? .min, $0.store) < ($1.last?.milliseconds ?? .min, $1.store) }
        return Set(due.prefix(share).map(\.store))
    }

    private mutating func publishSnapshots(of stores: Set<UInt16>, present: [UInt16: [PresenceEngine.Visit]], at now: Timestamp) {
        guard !stores.isEmpty else { return }
        let guests = engine.guestCountsByStore(at: now)
        for store in configuration.stores where stores.contains(store.id) {
            dirtyStores.remove(store.id)
            lastSnapshot[store.id] = now
            let nodes = engine.nodeStates(store: store.id).map {
                PresenceSnapshot.NodeState(department: $0.node.department, node: $0.node.node, state: $0.state)
            }
            let members = (present[store.id] ?? []).compactMap { visit in profiles[visit.member].map { (visit, $0) } }
            metrics.snapshot(
                store: store.id, members: members.count, guests: (guests[store.id] ?? [:]).values.reduce(0, +),
                nodes: nodes.map { ($0.department, $0.node, $0.state == .online) })
            actions.snapshots.append(
                SnapshotSource(
                    store: store, present: members, guests: guests[store.id] ?? [:], nodes: nodes, at: now,
                    survey: surveyStatus(of: store.id)))
        }
    }

    /// What was dropped, by reason: refused messages, and readings too late or from offline nodes.
    private func droppedCounts() -> [String: UInt64] {
        let counters = engine.counters
        var dropped = drops.counts
        if counters.late > 0 { dropped["late"] = counters.late }
        if counters.fromOfflineNodes > 0 { dropped["offline-node"] = counters.fromOfflineNodes }
        return dropped
    }

    private mutating func publishHealth(at now: Timestamp) {
        let counters = engine.counters
        let dropped = droppedCounts()
        let health = CoordinatorHealth(
            uptimeSeconds: (now - startedAt).wholeMilliseconds / 1000, batches: counters.batches, sightings: counters.sightings,
            events: eventsPublished, dropped: dropped, gaps: counters.gaps, duplicates: counters.duplicates,
            tracked: engine.trackedCount, rssBytes: 0,
            nodes: engine.nodeClocks.map { .init(address: $0.node, state: $0.state, clockSkew: $0.clockSkew) },
            database: .init(
                failing: database.failure != nil, queued: database.queued, error: database.failure,
                since: database.failingSince),
            rangingReports: counters.rangingReports,
            leases: active.sorted().map { store in
                let since = activeSince[store] ?? startedAt
                return .init(store: store, since: since, heldSeconds: max(0, (now - since).wholeMilliseconds / 1000))
            },
            surveys: surveyHealth())
        for survey in health.surveys where survey.stale && !staleSurveys.contains(survey.store) {
            logger.warning("\(survey.message)", metadata: ["store": "\(survey.store)", "share": "\(survey.share)"])
        }
        staleSurveys = Set(health.surveys.filter(\.stale).map(\.store))
        actions.health = health
    }

    /// Saves every visit the engine holds (open and recently left), with their latest last-seen times (at a stop).
    mutating func saveVisits() -> CoordinatorActions {
        for visit in engine.visits where active.contains(visit.store) { actions.registry.save(visit) }
        return takeActions()
    }

    /// Saves the visits of the next slice of members, so that every visit is saved at least every
    /// `visitSaveInterval` without one long write holding up the messages.
    private mutating func saveVisitSlice() {
        let ticks = max(1, Int(CoordinatorService.visitSaveInterval.wholeMilliseconds / CoordinatorService.tickInterval.wholeMilliseconds))
        let slots = engine.memberSlots
        guard slots > 0 else { return }
        if visitSaveCursor >= slots { visitSaveCursor = 0 }
        let end = min(slots, visitSaveCursor + (slots + ticks - 1) / ticks)
        let visits = engine.visits(inSlots: visitSaveCursor..<end)
        visitSaveCursor = end
        for visit in visits where active.contains(visit.store) { actions.registry.save(visit) }
    }

    /// Takes members as others left them (read by the caller outside the decisions): the `members` command, and with
    /// a shared registry the other stores' coordinators, whose visit and check-in counts and promo firings come with
    /// them. Counts made here and still waiting for the writer are kept (the larger count and the later visit win), and
    /// so are firings made here (the later one wins). Costs the members that changed, not the whole registry.
    mutating func membersChanged(_ changes: MemberChanges, at now: Timestamp) -> CoordinatorActions {
        for id in changes.removed {
            profiles[id] = nil
            promoFires[id] = nil
        }
        for (id, record) in changes.records {
            profiles[id] = profiles[id].map { CoordinatorState.keepingCounts(of: $0, in: record.profile) } ?? record.profile
        }
        for (member, promos) in changes.promoFires where profiles[member] != nil {
            var fires = promos
            for (promo, time) in promoFires[member] ?? [:] where (fires[promo]).map({ $0 < time }) ?? true { fires[promo] = time }
            promoFires[member] = fires
        }
        apply(engine.updateDirectory(changes.records.mapValues(\.beacons), removing: changes.removed), at: now)
        cacheSchedule.changedSoon()
        logger.debug("members changed", metadata: ["changed": "\(changes.records.count)", "removed": "\(changes.removed.count)"])
        return takeActions()
    }

    /// `registry`'s profile keeping the counts made here that the writer has not saved yet: the larger visit count
    /// (with its visit time) and the larger check-in count win.
    private static func keepingCounts(of known: MemberProfile, in registry: MemberProfile) -> MemberProfile {
        var profile = registry
        if known.visits > profile.visits {
            profile.visits = known.visits
            profile.lastVisitAt = known.lastVisitAt
        }
        profile.checkins = max(known.checkins, profile.checkins)
        return profile
    }
}

/// What one store's presence snapshot is made from, taken by the decisions, so that the snapshot can be sorted, made
/// and encoded outside them. It holds copies of the present members' profiles, not the state's dictionary of all
/// profiles: sharing that would make the next visit count copy the whole dictionary. `present` may come in any order.
struct SnapshotSource: Sendable {
    let store: CoordinatorConfiguration.Store
    let present: [(visit: PresenceEngine.Visit, profile: MemberProfile)]
    let guests: [UInt16: Int]
    let nodes: [PresenceSnapshot.NodeState]
    let at: Timestamp
    /// For a surveyed store: its survey's status.
    var survey: SurveyStatus? = nil
    /// With leases: until when (monotonic) the store may be decided for; the snapshot is not published after.
    var decidingUntil: ContinuousClock.Instant? = nil

    /// How many bytes of member photos one snapshot carries at most.
    static let photoBudget = 128 * 1024

    /// The snapshot: present members newest arrival first, with how sure the engine is of each (a member whose
    /// department is unknown is listed with none and counted in no department), occupancy of every department
    /// (named), node states.
    func snapshot() -> PresenceSnapshot {
        var occupancy: [UInt16: PresenceSnapshot.Occupancy] = [:]
        for department in store.departments { occupancy[department.id] = .init(members: 0, guests: 0, name: department.name) }
        var members: [PresenceSnapshot.PresentMember] = []
        members.reserveCapacity(present.count)
        var photoBytes = 0
        for (visit, var profile) in present.sorted(by: { PresenceEngine.Visit.newestFirst($0.visit, $1.visit) }) {
            // Photos ride along while they fit the budget, newest arrivals first: a busy store's snapshot must stay
            // within what brokers and readers take (256 KiB); later members are shown by their initials.
            if let photo = profile.photo {
                photoBytes += photo.utf8.count
                if photoBytes > SnapshotSource.photoBudget { profile.photo = nil }
            }
            let department = visit.departmentUnknown ? nil : visit.department
            let departmentName = department.map { store.department($0)?.name ?? "Department \($0)" }
            members.append(
                .init(
                    member: profile, department: department, departmentName: departmentName,
                    proximity: visit.proximity, arrivedAt: visit.arrivedAt, inDepartmentSince: visit.inDepartmentSince,
                    lastSeen: visit.lastSeen, confidence: visit.confidence))
            if let department { occupancy[department, default: .init(members: 0, guests: 0)].members += 1 }
        }
        for (department, guests) in guests {
            occupancy[department, default: .init(members: 0, guests: 0)].guests += guests
        }
        var snapshot = PresenceSnapshot(
            store: store.id, name: store.name, updatedAt: at, members: members, occupancy: occupancy, nodes: nodes)
        snapshot.survey = survey
        return snapshot
    }
}

extension PresenceEngine.Output {
    /// The store the output is about, if any.
    fileprivate var store: UInt16? {
        switch self {
        case .arrived(_, let store, _, _, _), .resumed(_, let store, _, _), .moved(_, let store, _, _, _, _),
            .left(_, let store, _, _, _), .presenceChanged(let store):
            return store
        case .node(let node, _, _):
            return node.store
        case .visitChanged(let visit):
            return visit.store
        }
    }
}
