import BeaconMeshCore
import Foundation
import GRDB

/// The webhook outbox in the store's SQLite file (schema v9).
extension SQLiteRegistry {
    /// Adds `deliveries` inside `apply`'s transaction, in their order.
    static func insertWebhookDeliveries(_ deliveries: [WebhookDelivery], in db: Database) throws {
        guard !deliveries.isEmpty else { return }
        let insert = try db.cachedStatement(
            sql: "INSERT INTO webhook_outbox (endpoint, store, event_id, body, member, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        for delivery in deliveries {
            try insert.execute(arguments: [
                delivery.endpoint, delivery.store, delivery.eventID, Data(delivery.body), delivery.personalDataOf,
                delivery.createdAt.milliseconds,
            ])
        }
    }

    public func pendingWebhookDeliveries(endpoint: String, stores: Set<UInt16>, limit: Int) throws -> [WebhookDelivery] {
        try database.read { db in
            // A cached statement (the stores rarely change) and columns by position: a courier reads this often.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT seq, store, event_id, body, member, created_at FROM webhook_outbox INDEXED BY webhook_outbox_endpoint
                    WHERE endpoint = ? AND store IN (\(Self.list(stores))) ORDER BY seq LIMIT ?
                    """)
            return try Row.fetchAll(statement, arguments: [endpoint, limit]).map { row in
                WebhookDelivery(
                    seq: row[0], endpoint: endpoint, store: row[1], eventID: row[2], body: [UInt8](row[3] as Data),
                    personalDataOf: row[4], createdAt: Timestamp(milliseconds: row[5]))
            }
        }
    }

    public func removeWebhookDeliveries(_ seqs: [Int64]) throws {
        guard !seqs.isEmpty else { return }
        try database.write { db in
            try db.execute(
                sql: "DELETE FROM webhook_outbox WHERE seq IN (SELECT value FROM json_each(?))",
                arguments: ["[" + seqs.map(String.init).joined(separator: ",") + "]"])
        }
    }

    public func webhookBacklog(endpoint: String, stores: Set<UInt16>) throws -> Int {
        try database.read { db in
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM webhook_outbox WHERE endpoint = ? AND store IN (\(Self.list(stores)))"),
                arguments: [endpoint]) ?? 0
        }
    }

    /// The stores as SQL's list of numbers (numbers only: nothing to quote).
    private static func list(_ stores: Set<UInt16>) -> String {
        stores.isEmpty ? "NULL" : stores.sorted().map(String.init).joined(separator: ",")
    }
}
