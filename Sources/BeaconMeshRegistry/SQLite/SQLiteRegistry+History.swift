import BeaconMeshCore
import Foundation
import GRDB

/// Visit history and the analytics read from it.
extension SQLiteRegistry {
    // MARK: History

    /// Keeps `record` in the history, replacing what was kept under its key (its stops, offers and check-ins too);
    /// nothing for a member that no longer exists.
    static func keep(_ record: VisitRecord, in db: Database) throws {
        let key: StatementArguments = [record.member, record.store, record.arrivedAt.milliseconds]
        let finished = record.leftAt == nil ? 0 : 1
        try db.cachedStatement(sql: "DELETE FROM visit_history WHERE member = ? AND store = ? AND arrived_at = ?").execute(arguments: key)
        try db.cachedStatement(
            sql: """
                INSERT INTO visit_history (member, store, arrived_at, left_at, number)
                SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM member WHERE id = ?)
                """
        ).execute(arguments: key + [record.leftAt?.milliseconds, record.number, record.member])
        guard db.changesCount > 0 else { return }
        let stop = try db.cachedStatement(
            sql: """
                INSERT INTO visit_stop (member, store, arrived_at, position, finished, department, name, entered_at, dwell_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        for (position, item) in record.stops.enumerated() {
            try stop.execute(
                arguments: key + [
                    position, finished, item.department, item.name, item.enteredAt.milliseconds, item.dwell.wholeMilliseconds,
                ])
        }
        let offer = try db.cachedStatement(
            sql:
                "INSERT INTO visit_offer (member, store, arrived_at, position, finished, promo, department, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        for (position, item) in record.offers.enumerated() {
            try offer.execute(arguments: key + [position, finished, item.promo, item.department, item.at.milliseconds])
        }
        let checkin = try db.cachedStatement(
            sql: "INSERT INTO visit_checkin (member, store, arrived_at, position, finished, department, at) VALUES (?, ?, ?, ?, ?, ?, ?)")
        for (position, item) in record.checkins.enumerated() {
            try checkin.execute(arguments: key + [position, finished, item.department, item.at.milliseconds])
        }
    }

    public func openHistory(stores: Set<UInt16>?) throws -> [VisitRecord] {
        try database.read { db in
            var records: [VisitRecord.Key: VisitRecord] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM visit_history WHERE left_at IS NULL") {
                let store: UInt16 = row["store"]
                guard stores?.contains(store) ?? true else { continue }
                let record = VisitRecord(
                    member: row["member"], store: store, arrivedAt: Timestamp(milliseconds: row["arrived_at"]), number: row["number"])
                records[record.key] = record
            }
            guard !records.isEmpty else { return [] }
            let open = "(SELECT member, store, arrived_at FROM visit_history WHERE left_at IS NULL)"
            func key(_ row: Row) -> VisitRecord.Key {
                VisitRecord.Key(member: row["member"], store: row["store"], arrivedAt: Timestamp(milliseconds: row["arrived_at"]))
            }
            for row in try Row.fetchAll(
                db, sql: "SELECT * FROM visit_stop WHERE (member, store, arrived_at) IN \(open) ORDER BY position")
            {
                records[key(row)]?.stops.append(
                    .init(
                        department: row["department"], name: row["name"], enteredAt: Timestamp(milliseconds: row["entered_at"]),
                        dwell: .milliseconds(row["dwell_ms"] as Int64)))
            }
            for row in try Row.fetchAll(
                db, sql: "SELECT * FROM visit_offer WHERE (member, store, arrived_at) IN \(open) ORDER BY position")
            {
                records[key(row)]?.offers.append(
                    .init(promo: row["promo"], department: row["department"], at: Timestamp(milliseconds: row["at"])))
            }
            for row in try Row.fetchAll(
                db, sql: "SELECT * FROM visit_checkin WHERE (member, store, arrived_at) IN \(open) ORDER BY position")
            {
                records[key(row)]?.checkins.append(.init(department: row["department"], at: Timestamp(milliseconds: row["at"])))
            }
            return Array(records.values)
        }
    }

    public func history(store: UInt16, from: Timestamp, to: Timestamp) throws -> [VisitRecord] {
        try database.read { db in
            let arguments: StatementArguments = [store, from.milliseconds, to.milliseconds]
            let range = "store = ? AND arrived_at >= ? AND arrived_at < ?"
            var records: [VisitRecord.Key: VisitRecord] = [:]
            var order: [VisitRecord.Key] = []
            func key(_ row: Row) -> VisitRecord.Key {
                VisitRecord.Key(member: row["member"], store: row["store"], arrivedAt: Timestamp(milliseconds: row["arrived_at"]))
            }
            for row in try Row.fetchAll(
                db, sql: "SELECT * FROM visit_history WHERE \(range) ORDER BY arrived_at, member", arguments: arguments)
            {
                let record = VisitRecord(
                    member: row["member"], store: row["store"], arrivedAt: Timestamp(milliseconds: row["arrived_at"]),
                    leftAt: (row["left_at"] as Int64?).map(Timestamp.init(milliseconds:)), number: row["number"])
                records[record.key] = record
                order.append(record.key)
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM visit_stop WHERE \(range) ORDER BY position", arguments: arguments) {
                records[key(row)]?.stops.append(
                    .init(
                        department: row["department"], name: row["name"], enteredAt: Timestamp(milliseconds: row["entered_at"]),
                        dwell: .milliseconds(row["dwell_ms"] as Int64)))
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM visit_offer WHERE \(range) ORDER BY position", arguments: arguments) {
                records[key(row)]?.offers.append(
                    .init(promo: row["promo"], department: row["department"], at: Timestamp(milliseconds: row["at"])))
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM visit_checkin WHERE \(range) ORDER BY position", arguments: arguments) {
                records[key(row)]?.checkins.append(.init(department: row["department"], at: Timestamp(milliseconds: row["at"])))
            }
            return order.compactMap { records[$0] }
        }
    }

    public func analytics(store: UInt16, from: Timestamp, to: Timestamp) throws -> StoreAnalytics {
        try database.read { db in
            let arguments: StatementArguments = ["store": store, "from": from.milliseconds, "to": to.milliseconds]
            return try AnalyticsQuery.run(store: store, from: from, to: to, dialect: .sqlite) { try Self.analyticsRows(db, $0, arguments) }
        }
    }

    public func storeSummaries(from: Timestamp, to: Timestamp) throws -> [StoreSummary] {
        try database.read { db in
            let arguments: StatementArguments = ["from": from.milliseconds, "to": to.milliseconds]
            return try AnalyticsQuery.summaries(from: from, to: to) { try Self.analyticsRows(db, $0, arguments) }
        }
    }

    /// The rows of one analytics query, as cells.
    static func analyticsRows(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> [[AnalyticsQuery.Value]] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            row.databaseValues.map { value -> AnalyticsQuery.Value in
                switch value.storage {
                case .int64(let number): return .integer(number)
                case .double(let number): return .integer(Int64(number.rounded()))
                case .string(let text): return .text(text)
                case .null, .blob: return .null
                }
            }
        }
    }

    public func historyStores() throws -> [UInt16] {
        try database.read { db in
            try Int.fetchAll(db, sql: "SELECT store FROM visit_history UNION SELECT store FROM guest_count ORDER BY store")
                .compactMap { UInt16(exactly: $0) }
        }
    }
}
