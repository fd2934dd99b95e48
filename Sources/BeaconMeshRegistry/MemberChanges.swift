/// Some members as the registry now holds them, and those it no longer holds: what a change feed's announcement
/// becomes once read, handed to the decisions instead of the whole registry.
///
/// Later changes merge over earlier ones (a member changed then removed is removed; removed then added back is
/// there again), so changes not yet taken can be coalesced.
public struct MemberChanges: Sendable, Equatable {
    /// The members added or changed, by id.
    public private(set) var records: [String: MemberRecord] = [:]
    /// The members removed or forgotten.
    public private(set) var removed: Set<String> = []

    public init(records: [MemberRecord] = [], removed: Set<String> = []) {
        self.removed = removed
        for record in records { self.records[record.id] = record }
        self.removed.subtract(self.records.keys)
    }

    public var isEmpty: Bool { records.isEmpty && removed.isEmpty }

    /// Takes `later` over these changes.
    public mutating func merge(_ later: MemberChanges) {
        for id in later.removed {
            records[id] = nil
            removed.insert(id)
        }
        for (id, record) in later.records {
            removed.remove(id)
            records[id] = record
        }
    }
}
