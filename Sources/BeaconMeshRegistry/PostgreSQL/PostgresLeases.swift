import BeaconMeshCore
import Logging
import PostgresNIO

/// The stores' leases as rows of `store_lease` (migration 2), each with an expiry the database sets from its own
/// `now()`, on a connection of their own (so that a long write of the registry never holds up a renewal). Every
/// coordinator that lists a store says so at each claim (`lease_candidate`), so a holder learns whether anybody
/// stands by for its store, and fences only then.
///
/// Why rows with an expiry rather than session-level advisory locks: a lock lives as long as the server thinks the
/// session does, and a coordinator cut off from the database by the network (not by a crash) keeps its session, and
/// with it the lock, until TCP keep-alive gives up — minutes, not `lease.ttl`. A row's lease ends at its expiry
/// whatever became of its holder's connection, so a standby takes the store over within the ttl; the holder knows
/// when the database will let its lease go (it sent its renewal before the database's now), and the rows show who
/// holds what and who stands by (health, the dashboard, `psql`).
public final class PostgresLeases: StoreLeases {
    private let session: PostgresSession

    /// How long a coordinator counts as standing by for a store after it last claimed it, in ttls.
    static let candidateTTLs = 3

    init(session: PostgresSession) {
        self.session = session
    }

    deinit { session.close() }

    public func claim(_ stores: [UInt16], for holder: String, ttl: Duration) throws -> [UInt16: LeaseGrant] {
        guard !stores.isEmpty else { return [:] }
        let seconds = Double(ttl.wholeMilliseconds) / 1000
        let candidateSeconds = seconds * Double(Self.candidateTTLs)
        let graceSeconds = Double(Self.unfencedGrace(ttl: ttl).wholeMilliseconds) / 1000
        let numbers = stores.map { Int32($0) }
        return try session.transaction { statements in
            try statements.execute(
                """
                INSERT INTO lease_candidate (store, coordinator, seen_at)
                SELECT s, \(holder), now() FROM unnest(\(numbers)::integer[]) AS s
                ON CONFLICT (store, coordinator) DO UPDATE SET seen_at = excluded.seen_at
                """)
            // Every store's lease at the same `now()`. A lease held by another is left alone (the WHERE of the upsert)
            // unless it ran out and its holder knew it had to fence, or ran out a grace ago with a holder that did not
            // (a lone holder gone); the stores held come back in the rows.
            let rows = try statements.query(
                """
                INSERT INTO store_lease AS l (store, holder, since, expires_at, fenced)
                SELECT s, \(holder), now(), now() + make_interval(secs => \(seconds)),
                    EXISTS (SELECT 1 FROM lease_candidate c WHERE c.store = s AND c.coordinator <> \(holder)
                        AND c.seen_at > now() - make_interval(secs => \(candidateSeconds)))
                FROM unnest(\(numbers)::integer[]) AS s
                ON CONFLICT (store) DO UPDATE
                    SET holder = excluded.holder, expires_at = excluded.expires_at, fenced = excluded.fenced,
                        since = CASE WHEN l.holder = excluded.holder AND (l.expires_at > now() OR NOT l.fenced)
                            THEN l.since ELSE now() END
                    WHERE l.holder = excluded.holder OR (l.expires_at <= now() AND l.fenced)
                        OR l.expires_at <= now() - make_interval(secs => \(graceSeconds))
                RETURNING store, (extract(epoch FROM since) * 1000)::bigint, fenced
                """)
            var held: [UInt16: LeaseGrant] = [:]
            for row in rows {
                let (store, since, fenced) = try row.decode((Int32, Int64, Bool).self)
                held[UInt16(store)] = LeaseGrant(since: Timestamp(milliseconds: since), fenced: fenced)
            }
            return held
        }
    }

    public func release(_ stores: [UInt16], for holder: String) throws {
        guard !stores.isEmpty else { return }
        let numbers = stores.map { Int32($0) }
        try session.transaction { statements in
            try statements.execute("DELETE FROM store_lease WHERE holder = \(holder) AND store = ANY(\(numbers)::integer[])")
            try statements.execute("DELETE FROM lease_candidate WHERE coordinator = \(holder) AND store = ANY(\(numbers)::integer[])")
        }
    }

    public func holders() throws -> [UInt16: StoreLease] {
        try session.run { statements in
            var leases: [UInt16: StoreLease] = [:]
            for row in try statements.query(
                """
                SELECT store, holder, (extract(epoch FROM since) * 1000)::bigint,
                    (extract(epoch FROM expires_at) * 1000)::bigint, fenced
                FROM store_lease WHERE expires_at > now() OR NOT fenced
                """)
            {
                let (store, holder, since, expires, fenced) = try row.decode((Int32, String, Int64, Int64, Bool).self)
                leases[UInt16(store)] = StoreLease(
                    holder: holder, since: Timestamp(milliseconds: since), expiresAt: Timestamp(milliseconds: expires),
                    fenced: fenced)
            }
            return leases
        }
    }

    public func exchangeWebhookLists(_ list: WebhookList, for holder: String, ttl: Duration) throws -> [String: WebhookList] {
        let candidateSeconds = Double(ttl.wholeMilliseconds) / 1000 * Double(Self.candidateTTLs)
        let names = list.endpoints.joined(separator: "\n")
        return try session.transaction { statements in
            try statements.execute(
                "UPDATE lease_candidate SET webhooks = \(list.fingerprint), webhook_endpoints = \(names) WHERE coordinator = \(holder)")
            var lists: [String: WebhookList] = [:]
            for row in try statements.query(
                """
                SELECT DISTINCT coordinator, webhooks, webhook_endpoints FROM lease_candidate
                WHERE coordinator <> \(holder) AND webhooks <> '' AND seen_at > now() - make_interval(secs => \(candidateSeconds))
                """)
            {
                let (coordinator, fingerprint, endpoints) = try row.decode((String, String, String).self)
                lists[coordinator] = WebhookList(
                    fingerprint: fingerprint, endpoints: endpoints.isEmpty ? [] : endpoints.split(separator: "\n").map(String.init))
            }
            return lists
        }
    }

    public func close() { session.close() }
}

extension PostgresRegistry {
    /// The stores' leases in this registry's database, on a connection of their own whose statements wait at most
    /// `timeout` (a renewal that hangs must not outlast the lease it renews).
    public func leases(timeout: Duration) throws(RegistryFailure) -> PostgresLeases {
        PostgresLeases(session: try PostgresSession(settings: settings, password: password, logger: logger, timeout: timeout))
    }
}
