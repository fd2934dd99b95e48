/// The registry as the `members` commands use it: members imported, removed, forgotten and purged (see
/// `MemberRegistry` for what every role shares).
public protocol MemberDirectory: MemberLookup {
    /// Merges `records` by id in one transaction: new ids are added; for known ones the given profile and beacons
    /// replace the stored ones, while the larger `visits` and `checkins` and the later `lastVisitAt` win.
    @discardableResult
    func merge(_ records: [MemberRecord]) throws -> ImportSummary

    /// Removes a member and everything kept about them; `false` if there was none.
    @discardableResult
    func remove(id: String) throws -> Bool

    /// Erases a member with their beacons, visits, custom fields, promo history and the survey samples of their
    /// beacons so that nothing of theirs stays readable in the database; `false` if there was none.
    @discardableResult
    func forget(id: String) throws -> Bool

    /// Finishes erasing the members forgotten so far, where deleted rows' bytes outlive the delete: SQLite's free
    /// pages and write-ahead log (which `forget` and the coordinator already rewrite), PostgreSQL's tables, their
    /// statistics and its write-ahead log (as the database's owner). Returns how many forgotten members are still to
    /// be announced: their ids wait in the outbox until a coordinator has published them (run it again after).
    func purgeErased() throws -> Int
}

extension MemberDirectory {
    /// Adds one member, or replaces the one with the same id (keeping its loyalty counts).
    public func upsert(_ record: MemberRecord) throws { try merge([record]) }
}
