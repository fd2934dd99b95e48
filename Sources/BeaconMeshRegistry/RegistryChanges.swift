import BeaconMeshCore

/// What the coordinator decided must reach the registry database, coalesced: applying it writes what applying each
/// change in order would have written.
///
/// Visit and check-in counts are increments the database adds to what it holds (`visits = visits + n`), so
/// coordinators sharing a registry, or one writing after an outage, never overwrite each other's counts; increments
/// for the same member add up here. A saved or ended visit is replaced by the member's next one, a promo firing by
/// the member's next firing of that promo. So the changes waiting while the database is unavailable stay bounded by
/// the number of members, however long it takes; survey samples, which add up, by `surveySampleLimit`.
public struct RegistryChanges: Sendable {
    /// A visit to save, or `nil`: the member's saved visit ended for good and is deleted.
    public internal(set) var visits: [String: PresenceEngine.Visit?] = [:]
    /// Members whose visits were counted: how many more, and the latest visit's time.
    public internal(set) var counts: [String: (visits: Int, at: Timestamp)] = [:]
    /// Promos that fired, by member and promo.
    public internal(set) var promoFires: [PromoFire: Timestamp] = [:]
    /// Members whose check-ins were counted: how many more.
    public internal(set) var checkins: [String: Int] = [:]
    /// Check-in requests handled (accepted or refused), so that none is counted twice.
    public internal(set) var checkinRequests: [String: Timestamp] = [:]
    /// Handled check-in requests older than this are forgotten.
    public internal(set) var forgetCheckinRequestsBefore: Timestamp?
    /// Registry events published: their rows leave the outbox.
    public internal(set) var publishedRegistryEvents: Set<Int64> = []
    /// The coordinator that decided these changes, if it shares its stores through leases: its visit rows (saved or
    /// ended) are written only for stores whose lease no other coordinator holds, so that a coordinator whose writes
    /// waited out a database outage never overwrites what the store's new holder saved meanwhile. Counts, promo
    /// firings and check-ins are always written: they are what was announced.
    public var decidedBy: String?
    /// Member visits to keep in the history, as they now stand (each replaces what is kept under its key).
    public internal(set) var history: [VisitRecord.Key: VisitRecord] = [:]
    /// Guest stays to add to the history's counts, per store, hour and department.
    public internal(set) var guestCounts: [GuestCountKey: GuestCount] = [:]
    /// Member visit history that began before this time is deleted (`retention.visits`).
    public internal(set) var forgetHistoryBefore: Timestamp?
    /// Survey samples to add, in the order they were queued; at most `surveySampleLimit` (the oldest give way).
    public internal(set) var surveySamples: [SurveySample] = []
    /// Webhook deliveries to add to the outbox, in the order they are owed.
    public internal(set) var webhookDeliveries: [WebhookDelivery] = []
    /// Survey marks as they now stand, each replacing what is kept under its key; `nil`: the mark ended (`stop`).
    public internal(set) var surveyMarks: [SurveyMarkRecord.Key: SurveyMarkRecord?] = [:]
    /// Where members' Eddystone-EID fobs stand as the coordinator followed them (offsets, by the fob's handle).
    public internal(set) var fobOffsets: [UInt64: Int64] = [:]

    /// The most survey samples that wait: two hours of one surveyed beacon (a few megabytes). Unlike the rest, samples
    /// are not replaced by later ones, so while the database is away for longer than that, the oldest are given up
    /// rather than growing the writer's queue without end.
    public static let surveySampleLimit = 7_200

    /// Where guest stays are counted: a store, an hour (its start, epoch milliseconds, UTC) and a department.
    public struct GuestCountKey: Hashable, Sendable {
        public var store: UInt16
        public var hour: Timestamp
        public var department: UInt16

        public init(store: UInt16, hour: Timestamp, department: UInt16) {
            self.store = store
            self.hour = hour
            self.department = department
        }
    }

    /// Guest stays counted in one place and hour, and their total length.
    public struct GuestCount: Hashable, Sendable {
        public var visits: Int
        public var dwell: Duration

        public init(visits: Int, dwell: Duration) {
            self.visits = visits
            self.dwell = dwell
        }
    }

    /// A promo firing, as the registry keeps it.
    public struct PromoFire: Hashable, Sendable {
        public var member: String
        public var promo: String
        public var store: UInt16
    }

    public init() {}

    /// Whether nothing waits.
    public var isEmpty: Bool { count == 0 && forgetCheckinRequestsBefore == nil && forgetHistoryBefore == nil }

    /// How many rows applying these changes writes.
    public var count: Int {
        visits.count + counts.count + promoFires.count + checkins.count + checkinRequests.count + publishedRegistryEvents.count
            + history.count + guestCounts.count + surveySamples.count + webhookDeliveries.count + surveyMarks.count
            + fobOffsets.count
    }

    /// Saves `visit` (replacing the member's saved one).
    public mutating func save(_ visit: PresenceEngine.Visit) { visits[visit.member] = .some(visit) }

    /// Deletes `member`'s saved visit.
    public mutating func endVisit(of member: String) { visits[member] = .some(nil) }

    /// Adds `visits` (one by default) to `member`'s visit count and makes `time` their last visit (unless a later
    /// one is known).
    public mutating func countVisit(of member: String, visits: Int = 1, at time: Timestamp) {
        let known = counts[member]
        counts[member] = ((known?.visits ?? 0) + visits, max(known?.at ?? time, time))
    }

    /// Records that `promo` fired for `member` at `time`.
    public mutating func promoFired(_ promo: String, member: String, store: UInt16, at time: Timestamp) {
        promoFires[PromoFire(member: member, promo: promo, store: store)] = time
    }

    /// Adds `count` (one by default) to `member`'s check-in count.
    public mutating func countCheckin(of member: String, count: Int = 1) {
        checkins[member, default: 0] += count
    }

    /// Records that check-in request `id` was handled at `time`.
    public mutating func handledCheckinRequest(_ id: String, at time: Timestamp) { checkinRequests[id] = time }

    /// Forgets handled check-in requests older than `time`.
    public mutating func forgetCheckinRequests(before time: Timestamp) {
        forgetCheckinRequestsBefore = max(forgetCheckinRequestsBefore ?? time, time)
    }

    /// Removes the published registry event `seq` from the outbox.
    public mutating func registryEventPublished(_ seq: Int64) { publishedRegistryEvents.insert(seq) }

    /// Keeps `visit` in the history as it now stands (replacing what is kept of it).
    public mutating func record(_ visit: VisitRecord) { history[visit.key] = visit }

    /// Counts a guest's stay in the history (never its beacon).
    public mutating func countGuest(_ visit: GuestVisit) {
        addGuests(
            GuestCount(visits: 1, dwell: visit.dwell), at: GuestCountKey(store: visit.store, hour: visit.hour, department: visit.department)
        )
    }

    /// Adds `count` guest stays to those counted at `key`.
    public mutating func addGuests(_ count: GuestCount, at key: GuestCountKey) {
        let known = guestCounts[key] ?? GuestCount(visits: 0, dwell: .zero)
        guestCounts[key] = GuestCount(visits: known.visits + count.visits, dwell: known.dwell + count.dwell)
    }

    /// Deletes member visit history that began before `time`.
    public mutating func forgetHistory(before time: Timestamp) {
        forgetHistoryBefore = max(forgetHistoryBefore ?? time, time)
    }

    /// Queues survey `samples` to be added after those queued before (keeping the newest `surveySampleLimit`); how
    /// many of the oldest gave way.
    @discardableResult
    public mutating func addSurveySamples(_ samples: [SurveySample]) -> Int {
        surveySamples.append(contentsOf: samples)
        let over = surveySamples.count - Self.surveySampleLimit
        guard over > 0 else { return 0 }
        surveySamples.removeFirst(over)
        return over
    }

    /// Keeps `mark` as the one of its beacon in its store (replacing what is kept).
    public mutating func keep(_ mark: SurveyMarkRecord) { surveyMarks[mark.key] = .some(mark) }

    /// Keeps `offset` (Unix seconds minus the fob's counter) as where the fob `handle` stands, as the coordinator
    /// followed it.
    public mutating func keepFobOffset(_ offset: Int64, handle: UInt64) { fobOffsets[handle] = offset }

    /// Ends the mark kept under `key`.
    public mutating func endMark(_ key: SurveyMarkRecord.Key) { surveyMarks[key] = .some(nil) }

    /// Adds `delivery` to the webhook outbox, after those queued before.
    public mutating func queueWebhook(_ delivery: WebhookDelivery) { webhookDeliveries.append(delivery) }

    /// Adds `later` on top of these changes (its entries replace these where both name the same thing); how many
    /// survey samples gave way (`surveySampleLimit`).
    @discardableResult
    public mutating func merge(_ later: RegistryChanges) -> Int {
        visits.merge(later.visits) { _, new in new }
        for (member, count) in later.counts { countVisit(of: member, visits: count.visits, at: count.at) }
        promoFires.merge(later.promoFires) { _, new in new }
        for (member, count) in later.checkins { countCheckin(of: member, count: count) }
        checkinRequests.merge(later.checkinRequests) { _, new in new }
        if let before = later.forgetCheckinRequestsBefore { forgetCheckinRequests(before: before) }
        publishedRegistryEvents.formUnion(later.publishedRegistryEvents)
        decidedBy = later.decidedBy ?? decidedBy
        history.merge(later.history) { _, new in new }
        for (key, count) in later.guestCounts { addGuests(count, at: key) }
        if let before = later.forgetHistoryBefore { forgetHistory(before: before) }
        webhookDeliveries.append(contentsOf: later.webhookDeliveries)
        surveyMarks.merge(later.surveyMarks) { _, new in new }
        fobOffsets.merge(later.fobOffsets) { _, new in new }
        return addSurveySamples(later.surveySamples)
    }
}
