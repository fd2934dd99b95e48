import BeaconMeshCore
import BeaconMeshRegistry

/// Which stores the coordinator may decide for now, from its lease renewals, timed on the monotonic clock: a store is
/// held until `ttl − margin` after the renewal that last succeeded for it was *sent*.
///
/// The database sets a lease's expiry to `ttl` after its own now, which comes after the renewal was sent, so a holder
/// that stops at `sent + ttl − margin` by its own monotonic clock has stopped before the database can let the lease go
/// to a standby — whatever the network, a pause (SIGSTOP, a VM frozen) or the wall clock do meanwhile. The margin
/// covers the two clocks' rates and what is on its way out when the holder stops. A store nobody stands by for
/// (`LeaseGrant.fenced` false) is held until a renewal says otherwise: its holder goes on deciding when it cannot
/// renew, as a lone coordinator cut off from the database always has (the database keeps its lease for it).
/// Pure: the caller passes the time in.
struct LeaseBook: Sendable, Equatable {
    /// How long a lease lasts unrenewed (the config's `lease.ttl`).
    let ttl: Duration
    /// How much earlier than the database a holder gives its lease up: a quarter of the ttl.
    var margin: Duration { ttl / 4 }
    /// How often leases are renewed (and free ones claimed): four times per ttl, so a renewal or two may fail or be
    /// slow without the lease being lost, and a standby claims a free lease within a quarter of the ttl.
    var renewInterval: Duration { ttl / 4 }

    /// Until when (monotonic) each held store may be decided for.
    private(set) var validUntil: [UInt16: ContinuousClock.Instant] = [:]
    /// Since when (the database's clock) each held store has been held.
    private(set) var since: [UInt16: Timestamp] = [:]
    /// The held stores another coordinator stands by for.
    private(set) var fenced: Set<UInt16> = []

    init(ttl: Duration) {
        self.ttl = ttl
    }

    /// How far ahead a store nobody stands by for is held (until a renewal says otherwise): a century.
    static let unfenced: Duration = .seconds(100 * 365 * 86_400)

    /// Takes a renewal's answer, sent at `sentAt`: `held` are the stores the database says are held now (with the start
    /// of each hold, and whether to fence); the others are not held.
    mutating func renewed(_ held: [UInt16: LeaseGrant], sentAt: ContinuousClock.Instant) {
        validUntil = held.mapValues { sentAt + ($0.fenced ? ttl - margin : Self.unfenced) }
        since = held.mapValues(\.since)
        fenced = Set(held.filter(\.value.fenced).keys)
    }

    /// Whether `store` may be decided for at `now`.
    func holds(_ store: UInt16, at now: ContinuousClock.Instant) -> Bool {
        validUntil[store].map { now < $0 } ?? false
    }

    /// The stores that may be decided for at `now`.
    func held(at now: ContinuousClock.Instant) -> Set<UInt16> {
        Set(validUntil.filter { now < $0.value }.keys)
    }

    /// Forgets the leases that ran out by `now`; returns their stores.
    mutating func expire(at now: ContinuousClock.Instant) -> Set<UInt16> {
        let expired = Set(validUntil.filter { now >= $0.value }.keys)
        for store in expired {
            validUntil[store] = nil
            since[store] = nil
            fenced.remove(store)
        }
        return expired
    }

    /// When the first held store runs out unless renewed before.
    var nextExpiry: ContinuousClock.Instant? { validUntil.values.min() }
}
