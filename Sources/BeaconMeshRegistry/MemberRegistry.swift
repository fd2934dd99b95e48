import BeaconMeshCore

/// The loyalty registry: members, their beacons and counts, open visits, promo firings, handled check-in requests and
/// the registry-event outbox — one behaviour whatever keeps it (`SQLiteRegistry` for one store's back office,
/// `PostgresRegistry` for a chain's shared registry; `RegistryLocation.open` picks by the config's `database`).
///
/// Every call blocks until the database answered and is one transaction: callers run them on threads of their own
/// (the coordinator's `RegistryWriter` and change feed, the `members` command), never on the path from a sighting to
/// an event. Loyalty counts are written as increments (`RegistryChanges`), so coordinators sharing a registry all
/// count; rows of a member that no longer exists are never written, so a forgotten member stays forgotten.
public protocol MemberRegistry: AnyObject, Sendable {
    /// Where the registry is, for logs and health: the SQLite file, or the PostgreSQL host, port and database.
    var location: String { get }

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

    /// Every member, ordered by id, beacons in key order.
    func allMembers() throws -> [MemberRecord]

    /// The members among `ids` that exist (for a change feed that names them).
    func members(ids: Set<String>) throws -> [MemberRecord]

    /// What the coordinator works from: profiles, beacon owners and promo history, read together.
    func contents() throws -> RegistryContents

    /// Writes `changes` in one transaction, at most once: a batch whose `batch` id was already applied (the answer
    /// to its commit was lost, and the writer tries it again) is skipped. Counts are added to the stored ones; rows
    /// of unknown members are skipped. An ended visit deletes the member's saved visit in `stores` (all if `nil`).
    func apply(_ changes: RegistryChanges, batch: String?, stores: Set<UInt16>?) throws

    /// The open (or recently left) visits saved for `stores` (all if `nil`).
    func loadVisits(stores: Set<UInt16>?) throws -> [PresenceEngine.Visit]

    /// The visits the history keeps as still going on, for `stores` (all if `nil`): what a restarted coordinator
    /// goes on with, so that each visit is kept once.
    func openHistory(stores: Set<UInt16>?) throws -> [VisitRecord]

    /// The member visits kept for `store` that began in `[from, to)`, oldest first, with their stops, offers and
    /// check-ins.
    func history(store: UInt16, from: Timestamp, to: Timestamp) throws -> [VisitRecord]

    /// The contract's analytics object for `store` and `[from, to)`, computed by the database (`AnalyticsQuery`).
    func analytics(store: UInt16, from: Timestamp, to: Timestamp) throws -> StoreAnalytics

    /// Every store's summary for `[from, to)` (the stores with history in it, in order), from grouped queries over
    /// the chain (`AnalyticsQuery.summaries`).
    func storeSummaries(from: Timestamp, to: Timestamp) throws -> [StoreSummary]

    /// The stores the history holds anything of, in order.
    func historyStores() throws -> [UInt16]

    /// When each promo last fired for each member: `[member: [promo: time]]`.
    func promoFires() throws -> [String: [String: Timestamp]]

    /// The ids of the check-in requests handled since `time`.
    func checkinRequests(since time: Timestamp) throws -> Set<String>

    /// Registry events waiting to be published, oldest first: those not yet claimed are claimed for `coordinator`
    /// (so that coordinators sharing a registry publish each once), and those it claimed before are returned again.
    func claimRegistryEvents(for coordinator: String) throws -> [PendingRegistryEvent]

    /// Watches the registry for changes made elsewhere (another coordinator, the `members` command).
    func changeFeed() throws -> any RegistryChangeFeed

    /// The cause of a failed call in an IT person's words (the file or host is named by the caller).
    func describe(_ error: any Error) -> String
}

extension MemberRegistry {
    /// One member, if known.
    public func member(id: String) throws -> MemberRecord? { try members(ids: [id]).first }

    /// Adds one member, or replaces the one with the same id (keeping its loyalty counts).
    public func upsert(_ record: MemberRecord) throws { try merge([record]) }

    /// Which member owns which beacon.
    public func beaconOwners() throws -> [BeaconKey: String] { try contents().beaconOwners }

    /// Writes `changes` in one transaction (no batch id, every store).
    public func apply(_ changes: RegistryChanges) throws { try apply(changes, batch: nil, stores: nil) }

    /// The open (or recently left) visits saved for any store.
    public func loadVisits() throws -> [PresenceEngine.Visit] { try loadVisits(stores: nil) }

    /// Records that `promo` fired for `member` at `time` (replacing the previous firing).
    public func recordPromoFire(member: String, promo: String, store: UInt16, at time: Timestamp) throws {
        var changes = RegistryChanges()
        changes.promoFired(promo, member: member, store: store, at: time)
        try apply(changes)
    }
}
