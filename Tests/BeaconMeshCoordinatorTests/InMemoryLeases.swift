import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Synchronization

/// Store leases kept in memory by the rules of `PostgresLeases`, with the database's now read from a `ServiceClock`
/// (a `ManualClock` in tests): a claim lists its holder as standing by for each store, takes a store that is free or
/// whose lease ran out with a holder that knew it had to fence (or a grace ago, with one that did not), renews the
/// holder's own, and fences when somebody else stood by within three ttls. `cut(_:)` makes a holder's claims fail, as a coordinator cut off from the database.
final class InMemoryLeases: StoreLeases {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "the database cannot be reached (cut by the test)" }
    }

    private struct Candidate: Hashable {
        var store: UInt16
        var holder: String
    }

    private struct State {
        var leases: [UInt16: StoreLease] = [:]
        var seen: [Candidate: Timestamp] = [:]
        var cut: Set<String> = []
        var claims: [String: Int] = [:]
        var webhookLists: [String: WebhookList] = [:]
    }

    private let clock: any ServiceClock
    private let state = Mutex(State())

    init(clock: any ServiceClock) {
        self.clock = clock
    }

    /// How many claims `holder` has made (a test waits for the keeper's next renewal with it).
    func claims(of holder: String) -> Int { state.withLock { $0.claims[holder] ?? 0 } }

    /// Makes `holder`'s claims and releases fail (`false`: answer again).
    func cut(_ holder: String, _ isCut: Bool = true) {
        state.withLock { state in
            if isCut { state.cut.insert(holder) } else { state.cut.remove(holder) }
        }
    }

    func claim(_ stores: [UInt16], for holder: String, ttl: Duration) throws -> [UInt16: LeaseGrant] {
        let now = clock.now()
        return try state.withLock { state in
            guard !state.cut.contains(holder) else { throw Failure() }
            state.claims[holder, default: 0] += 1
            var held: [UInt16: LeaseGrant] = [:]
            for store in stores {
                state.seen[Candidate(store: store, holder: holder)] = now
                let standby = state.seen.contains { candidate, seenAt in
                    candidate.store == store && candidate.holder != holder
                        && seenAt.milliseconds > now.milliseconds - 3 * ttl.wholeMilliseconds
                }
                let expiresAt = Timestamp(milliseconds: now.milliseconds + ttl.wholeMilliseconds)
                var since = now
                if let lease = state.leases[store] {
                    let running = lease.expiresAt > now || !lease.fenced
                    let graceEnds = lease.expiresAt.milliseconds + Self.unfencedGrace(ttl: ttl).wholeMilliseconds
                    if lease.holder != holder, lease.expiresAt > now || (!lease.fenced && graceEnds > now.milliseconds) { continue }
                    if lease.holder == holder, running { since = lease.since }
                }
                state.leases[store] = StoreLease(holder: holder, since: since, expiresAt: expiresAt, fenced: standby)
                held[store] = LeaseGrant(since: since, fenced: standby)
            }
            return held
        }
    }

    func release(_ stores: [UInt16], for holder: String) throws {
        try state.withLock { state in
            guard !state.cut.contains(holder) else { throw Failure() }
            for store in stores where state.leases[store]?.holder == holder { state.leases[store] = nil }
            for store in stores { state.seen[Candidate(store: store, holder: holder)] = nil }
        }
    }

    func holders() throws -> [UInt16: StoreLease] {
        let now = clock.now()
        return state.withLock { $0.leases.filter { $0.value.expiresAt > now || !$0.value.fenced } }
    }

    func exchangeWebhookLists(_ list: WebhookList, for holder: String, ttl: Duration) throws -> [String: WebhookList] {
        let now = clock.now()
        return try state.withLock { state in
            guard !state.cut.contains(holder) else { throw Failure() }
            state.webhookLists[holder] = list
            var others: [String: WebhookList] = [:]
            for (candidate, seenAt) in state.seen
            where candidate.holder != holder && seenAt.milliseconds > now.milliseconds - 3 * ttl.wholeMilliseconds {
                if let list = state.webhookLists[candidate.holder] { others[candidate.holder] = list }
            }
            return others
        }
    }

    func close() {}
}
