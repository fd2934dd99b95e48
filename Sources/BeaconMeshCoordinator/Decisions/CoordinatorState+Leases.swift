import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// Leases and take-overs: which stores are decided here, standing down when a lease may have run out, and continuing a
/// store taken over from what the shell read of it.
extension CoordinatorState {
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
        /// The survey marks its holder kept for `stores`.
        var surveyMarks: [SurveyMarkRecord] = []

        /// Reads what taking `stores` over needs out of `registry` (at `now`).
        static func read(stores: Set<UInt16>, from registry: any RegistryReading & SurveyRegistry, at now: Timestamp) throws -> TakeOver {
            TakeOver(
                stores: stores, visits: try registry.loadVisits(stores: stores), promoFires: try registry.promoFires(),
                handledCheckins: try registry.checkinRequests(since: now - CoordinatorState.checkinMemory),
                history: try registry.openHistory(stores: stores),
                surveyMarks: try registry.surveyMarks(stores: stores))
        }
    }

    /// Takes the answer to a lease renewal sent at `sentAt` (`held`: the stores the database says it holds, with
    /// since when and whether to fence), at `now` (`instant` on the monotonic clock): stores no longer held are stood by for; stores newly
    /// held are to be taken over (`takeOvers`: the shell loads them).
    mutating func leasesRenewed(
        _ held: [UInt16: LeaseGrant], sentAt: ContinuousClock.Instant, at now: Timestamp, instant: ContinuousClock.Instant,
        undecided: [UInt16: Timestamp]? = nil
    ) -> CoordinatorActions {
        guard var book = leases else { return takeActions() }
        if let undecided { alertRules(see: undecided, at: now) }
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

    mutating func standDown(at instant: ContinuousClock.Instant) {
        guard var book = leases else { return }
        _ = book.expire(at: instant)
        leases = book
        let lost = active.filter { !book.holds($0, at: instant) }
        guard !lost.isEmpty else { return }
        for store in lost.sorted() {
            active.remove(store)
            activeSince[store] = nil
            cacheSchedule.changedNow()
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
            alertRules(restore: visits)
            // The history of the visits going on continues as a restart continues it.
            let names = configuration
            journal.restore(
                loaded.history.filter { $0.store == store }, visits: visits, visitNumbers: profiles.mapValues(\.visits),
                name: { store, department in names.store(store)?.department(department)?.name ?? "Department \(department)" })
            surveyMarks.restore(loaded.surveyMarks.filter { $0.store == store })
            active.insert(store)
            activeSince[store] = book.since[store] ?? now
            dirtyStores.insert(store)
            lastSnapshot[store] = nil
            taken.insert(store)
            cacheSchedule.changedNow()
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
}
