import BeaconMeshCore

/// The loyalty registry: members, their beacons and counts, open visits and their history, promo firings, handled
/// check-in requests and the registry-event outbox — one behaviour whatever keeps it (`SQLiteRegistry` for one store's
/// back office, `PostgresRegistry` for a chain's shared registry; `RegistryLocation.open` picks by the config's
/// `database`). Callers hold it by the role they play, each a protocol of a few calls:
///
/// - `RegistryWriting`: the coordinator's `RegistryWriter`, which alone writes what the decisions changed;
/// - `RegistryReading`: what the coordinator works from at its start, a take-over and its poll of others' changes;
/// - `MemberDirectory`: the `members` commands (import, remove, forget, purge, export);
/// - `AnalyticsReading`: the dashboard's history and analytics;
/// - `WebhookOutbox`: the coordinator's webhook couriers;
/// - `SurveyRegistry`: the store surveys (samples, fits, marks), which the coordinator reads beside `RegistryReading`;
/// - `StoreLeases` (a connection of its own) beside them.
///
/// Every call blocks until the database answered and is one transaction: callers run them on threads of their own,
/// never on the path from a sighting to an event. Loyalty counts are written as increments (`RegistryChanges`), so
/// coordinators sharing a registry all count; rows of a member that no longer exists are never written, so a forgotten
/// member stays forgotten.
public typealias MemberRegistry = MemberDirectory & RegistryReading & RegistryWriting & AnalyticsReading & WebhookOutbox
    & SurveyRegistry

/// What every role of the registry has: where it is, and how it says what went wrong.
public protocol RegistryBackend: AnyObject, Sendable {
    /// Where the registry is, for logs and health: the SQLite file, or the PostgreSQL host, port and database.
    var location: String { get }

    /// The cause of a failed call in an IT person's words (the file or host is named by the caller).
    func describe(_ error: any Error) -> String
}

/// Reading members by id, for the roles that look members up.
public protocol MemberLookup: RegistryBackend {
    /// Every member, ordered by id, beacons in key order.
    func allMembers() throws -> [MemberRecord]

    /// The members among `ids` that exist (for a change feed that names them).
    func members(ids: Set<String>) throws -> [MemberRecord]
}

extension MemberLookup {
    /// One member, if known.
    public func member(id: String) throws -> MemberRecord? { try members(ids: [id]).first }
}
