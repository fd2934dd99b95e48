import BeaconMeshCore

/// Some members as the registry now holds them, and those it no longer holds: what a change of the registry becomes
/// once read (the members a change feed announced, or the difference a whole read makes), handed to the decisions
/// instead of the whole registry.
///
/// Later changes merge over earlier ones (a member changed then removed is removed; removed then added back is
/// there again), so changes not yet taken can be coalesced.
public struct MemberChanges: Sendable, Equatable {
    /// The members added or changed, by id.
    public private(set) var records: [String: MemberRecord] = [:]
    /// The members removed or forgotten.
    public private(set) var removed: Set<String> = []
    /// The promo history of members whose history changed (another store's coordinator fired a promo), whole.
    public private(set) var promoFires: [String: [String: Timestamp]] = [:]

    public init(records: [MemberRecord] = [], removed: Set<String> = [], promoFires: [String: [String: Timestamp]] = [:]) {
        self.removed = removed
        for record in records { self.records[record.id] = record }
        self.removed.subtract(self.records.keys)
        self.promoFires = promoFires.filter { !self.removed.contains($0.key) }
    }

    public var isEmpty: Bool { records.isEmpty && removed.isEmpty && promoFires.isEmpty }

    /// Takes `later` over these changes.
    public mutating func merge(_ later: MemberChanges) {
        for id in later.removed {
            records[id] = nil
            promoFires[id] = nil
            removed.insert(id)
        }
        for (id, record) in later.records {
            removed.remove(id)
            records[id] = record
        }
        promoFires.merge(later.promoFires) { _, newer in newer }
    }
}
