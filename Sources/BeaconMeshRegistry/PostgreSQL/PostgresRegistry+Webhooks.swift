import BeaconMeshCore
import NIOCore
import PostgresNIO

/// The webhook outbox in the chain's database (schema version 7): every store's deliveries, keyed by store, so the
/// store's lease holder delivers them whichever coordinator queued them.
extension PostgresRegistry {
    /// Adds `deliveries` inside `apply`'s transaction, in their order (a `bigserial` follows the rows' order).
    func insertWebhookDeliveries(_ deliveries: [WebhookDelivery], _ statements: PostgresSession.Statements) throws {
        for start in stride(from: 0, to: deliveries.count, by: 2000) {
            let slice = Array(deliveries[start..<min(deliveries.count, start + 2000)])
            let members = NullableColumn(slice.map(\.personalDataOf), placeholder: "")
            try statements.execute(
                """
                INSERT INTO webhook_outbox (endpoint, store, event_id, body, member, created_at)
                SELECT endpoint, store, event_id, body, CASE WHEN has_member THEN member END, created_at
                FROM unnest(\(slice.map(\.endpoint))::text[], \(slice.map { Int32($0.store) })::integer[],
                    \(slice.map(\.eventID))::text[], \(slice.map { ByteBuffer(bytes: $0.body) })::bytea[],
                    \(members.values)::text[], \(members.present)::bool[], \(slice.map(\.createdAt.milliseconds))::bigint[])
                    WITH ORDINALITY AS d(endpoint, store, event_id, body, member, has_member, created_at, n)
                ORDER BY n
                """)
        }
    }

    public func pendingWebhookDeliveries(endpoint: String, stores: Set<UInt16>, limit: Int) throws -> [WebhookDelivery] {
        try session.run { statements in
            try statements.query(
                """
                SELECT seq, store, event_id, body, member, created_at FROM webhook_outbox
                WHERE endpoint = \(endpoint) AND store = ANY(\(stores.map { Int32($0) })::integer[]) ORDER BY seq LIMIT \(limit)
                """
            ).map { row in
                let (seq, store, eventID, body, member, createdAt) = try row.decode(
                    (Int64, Int32, String, ByteBuffer, String?, Int64).self)
                return WebhookDelivery(
                    seq: seq, endpoint: endpoint, store: UInt16(clamping: store), eventID: eventID, body: Array(buffer: body),
                    personalDataOf: member, createdAt: Timestamp(milliseconds: createdAt))
            }
        }
    }

    public func removeWebhookDeliveries(_ seqs: [Int64]) throws {
        guard !seqs.isEmpty else { return }
        try session.run { statements in _ = try statements.execute("DELETE FROM webhook_outbox WHERE seq = ANY(\(seqs))") }
    }

    public func webhookBacklog(endpoint: String, stores: Set<UInt16>) throws -> Int {
        try session.run { statements in
            try statements.query(
                """
                SELECT count(*) FROM webhook_outbox WHERE endpoint = \(endpoint) AND store = ANY(\(stores.map { Int32($0) })::integer[])
                """
            ).first.map { Int(try $0.decode(Int64.self)) } ?? 0
        }
    }
}
