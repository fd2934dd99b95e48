import BeaconMeshCore

/// What the coordinator decided must reach the registry database, coalesced: applying it writes the latest state
/// of every member it names, which is what applying each change in order would have written.
///
/// A member's visit count only grows (the larger count wins), a saved or ended visit is replaced by the member's
/// next one, a promo firing by the member's next firing of that promo. So the changes waiting while the database is
/// unavailable stay bounded by the number of members, however long it takes.
public struct RegistryChanges: Sendable {
    /// A visit to save, or `nil`: the member's saved visit ended for good and is deleted.
    public internal(set) var visits: [String: PresenceEngine.Visit?] = [:]
    /// Members whose visit was counted: their count and the visit's time.
    public internal(set) var counts: [String: (visits: Int, at: Timestamp)] = [:]
    /// Promos that fired, by member and promo.
    public internal(set) var promoFires: [PromoFire: Timestamp] = [:]
    /// Members whose check-ins were counted: their count now.
    public internal(set) var checkins: [String: Int] = [:]
    /// Check-in requests handled (accepted or refused), so that none is counted twice.
    public internal(set) var checkinRequests: [String: Timestamp] = [:]
    /// Handled check-in requests older than this are forgotten.
    public internal(set) var forgetCheckinRequestsBefore: Timestamp?
    /// Registry events published: their rows leave the outbox.
    public internal(set) var publishedRegistryEvents: Set<Int64> = []

    /// A promo firing, as the registry keeps it.
    public struct PromoFire: Hashable, Sendable {
        public var member: String
        public var promo: String
        public var store: UInt16
    }

    public init() {}

    /// Whether nothing waits.
    public var isEmpty: Bool { count == 0 && forgetCheckinRequestsBefore == nil }

    /// How many rows applying these changes writes.
    public var count: Int {
        visits.count + counts.count + promoFires.count + checkins.count + checkinRequests.count + publishedRegistryEvents.count
    }

    /// Saves `visit` (replacing the member's saved one).
    public mutating func save(_ visit: PresenceEngine.Visit) { visits[visit.member] = .some(visit) }

    /// Deletes `member`'s saved visit.
    public mutating func endVisit(of member: String) { visits[member] = .some(nil) }

    /// Sets `member`'s visit count to `visits` (unless already larger) and their last visit to `time`.
    public mutating func countVisit(of member: String, visits: Int, at time: Timestamp) {
        if let known = counts[member], known.visits >= visits { return }
        counts[member] = (visits, time)
    }

    /// Records that `promo` fired for `member` at `time`.
    public mutating func promoFired(_ promo: String, member: String, store: UInt16, at time: Timestamp) {
        promoFires[PromoFire(member: member, promo: promo, store: store)] = time
    }

    /// Sets `member`'s check-in count to `count` (unless already larger).
    public mutating func countCheckin(of member: String, count: Int) {
        checkins[member] = max(checkins[member] ?? 0, count)
    }

    /// Records that check-in request `id` was handled at `time`.
    public mutating func handledCheckinRequest(_ id: String, at time: Timestamp) { checkinRequests[id] = time }

    /// Forgets handled check-in requests older than `time`.
    public mutating func forgetCheckinRequests(before time: Timestamp) {
        forgetCheckinRequestsBefore = max(forgetCheckinRequestsBefore ?? time, time)
    }

    /// Removes the published registry event `seq` from the outbox.
    public mutating func registryEventPublished(_ seq: Int64) { publishedRegistryEvents.insert(seq) }

    /// Adds `later` on top of these changes (its entries replace these where both name the same thing).
    public mutating func merge(_ later: RegistryChanges) {
        visits.merge(later.visits) { _, new in new }
        for (member, count) in later.counts { countVisit(of: member, visits: count.visits, at: count.at) }
        promoFires.merge(later.promoFires) { _, new in new }
        for (member, count) in later.checkins { countCheckin(of: member, count: count) }
        checkinRequests.merge(later.checkinRequests) { _, new in new }
        if let before = later.forgetCheckinRequestsBefore { forgetCheckinRequests(before: before) }
        publishedRegistryEvents.formUnion(later.publishedRegistryEvents)
    }
}
