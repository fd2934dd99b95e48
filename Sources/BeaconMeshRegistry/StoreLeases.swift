import BeaconMeshCore

/// The stores' leases in a chain's shared registry: for each store at most one coordinator holds an unexpired lease,
/// and only it decides for the store. Expiry is the database's clock (`now()`), never a coordinator's.
///
/// Every call blocks until the database answered (at most the timeout the leases were made with) and is one
/// statement: the caller runs them on a thread of its own, never on the path from a sighting to an event.
public protocol StoreLeases: AnyObject, Sendable {
    /// Says that `holder` lists `stores` (it stands by for those it does not hold), claims the lease of each that is
    /// free, or expired with a holder that knew it had to fence, or expired `unfencedGrace(ttl:)` ago with a holder
    /// that did not know (nobody stood by at its last renewal: a lone coordinator that died, or was replaced by one
    /// with another id), and renews those it holds, each until `ttl` after the database's now; returns the stores
    /// `holder` holds now, each with when its hold began and whether it must fence.
    func claim(_ stores: [UInt16], for holder: String, ttl: Duration) throws -> [UInt16: LeaseGrant]

    /// Ends `holder`'s leases of `stores` at once and stops standing by for them (a clean stop), so that a standby
    /// need not wait out the ttl.
    func release(_ stores: [UInt16], for holder: String) throws

    /// The unexpired leases of every store, by store.
    func holders() throws -> [UInt16: StoreLease]

    /// Records `list` as `holder`'s `webhooks:` list beside its claims, and returns the lists of the other coordinators
    /// that listed a store within three ttls (those that may take a store over from it, or it from them), by id. A
    /// coordinator of an older version, which records none, is left out.
    func exchangeWebhookLists(_ list: WebhookList, for holder: String, ttl: Duration) throws -> [String: WebhookList]

    /// Closes the leases' own database connection.
    func close()
}

extension StoreLeases {
    /// How long an unfenced lease that ran out stays its holder's before a standby may take it: a holder that reaches
    /// the database renews every quarter ttl, and at its next renewal learns of the standby (its lease is fenced from
    /// then on); one that does not is dead, frozen or cut off, and a store taken from it is decided by one coordinator
    /// among those that reach the database (the cut-off one learns it lost the lease at its first renewal).
    public static func unfencedGrace(ttl: Duration) -> Duration { min(ttl / 4, .milliseconds(2500)) }
}

/// Who holds one store's lease, by the database's clock.
public struct StoreLease: Sendable, Hashable {
    /// The coordinator's id.
    public var holder: String
    /// When its hold began.
    public var since: Timestamp
    /// When the lease runs out unless renewed.
    public var expiresAt: Timestamp
    /// Whether the holder knew of a standby at its last renewal (see `LeaseGrant.fenced`).
    public var fenced: Bool

    public init(holder: String, since: Timestamp, expiresAt: Timestamp, fenced: Bool) {
        self.holder = holder
        self.since = since
        self.expiresAt = expiresAt
        self.fenced = fenced
    }
}
