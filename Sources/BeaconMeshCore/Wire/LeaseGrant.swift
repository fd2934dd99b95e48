/// A store's lease held, as a claim returns it (`StoreLeases`) and as a coordinator's local cache keeps it.
public struct LeaseGrant: Sendable, Hashable {
    /// When the hold began (the database's clock).
    public var since: Timestamp
    /// Whether another coordinator stands by for the store (it listed the store within the last three ttls): the
    /// holder must then stop deciding before its lease can run out unrenewed. A holder alone goes on deciding when it
    /// cannot renew (as a lone coordinator cut off from the database always has), and its lease is not taken from it
    /// until it has renewed once knowing of the standby, or released it.
    public var fenced: Bool

    public init(since: Timestamp, fenced: Bool) {
        self.since = since
        self.fenced = fenced
    }
}
