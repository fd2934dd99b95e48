import BeaconMeshCore
import Foundation
import GRDB

/// What the coordinator writes (visits, counts, promo firings, check-ins, history, guests: one transaction per
/// batch) and reads back at a restart (saved visits, promo history).
extension SQLiteRegistry {
    // MARK: Loyalty

    /// Writes `changes` in one transaction: visits saved or deleted, visit and check-in counts added, promo
    /// firings. Rows of members that no longer exist are skipped. One coordinator owns a SQLite file, so `stores`
    /// needs no narrowing: a member has one saved visit.
    public func apply(_ changes: RegistryChanges, batch: String?, stores: Set<UInt16>?) throws {
        guard !changes.isEmpty else { return }
        var purged = false
        try database.write { db in
            if let batch {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO appliedWrite (id, at) VALUES (?, ?)",
                    arguments: [batch, Int64(Date().timeIntervalSince1970 * 1000)])
                guard db.changesCount > 0 else { return }
            }
            for (member, visit) in changes.visits {
                if let visit {
                    try SQLiteRegistry.save(visit, in: db)
                } else {
                    try db.execute(sql: "DELETE FROM visit WHERE member = ?", arguments: [member])
                }
            }
            let count = try db.cachedStatement(
                sql: "UPDATE member SET visits = visits + ?, lastVisitAt = max(coalesce(lastVisitAt, 0), ?) WHERE id = ?")
            for (member, counted) in changes.counts {
                try count.execute(arguments: [counted.visits, counted.at.milliseconds, member])
            }
            let checkins = try db.cachedStatement(sql: "UPDATE member SET checkins = checkins + ? WHERE id = ?")
            for (member, count) in changes.checkins {
                try checkins.execute(arguments: [count, member])
            }
            for (request, time) in changes.checkinRequests {
                try db.execute(sql: "INSERT OR IGNORE INTO checkinRequest (id, at) VALUES (?, ?)", arguments: [request, time.milliseconds])
            }
            if let before = changes.forgetCheckinRequestsBefore {
                try db.execute(sql: "DELETE FROM checkinRequest WHERE at < ?", arguments: [before.milliseconds])
                try db.execute(sql: "DELETE FROM appliedWrite WHERE at < ?", arguments: [before.milliseconds])
            }
            for seq in changes.publishedRegistryEvents {
                try db.cachedStatement(sql: "DELETE FROM registryEvent WHERE seq = ?").execute(arguments: [seq])
            }
            if let before = changes.forgetHistoryBefore {
                try db.execute(sql: "DELETE FROM visit_history WHERE arrived_at < ?", arguments: [before.milliseconds])
                purged = db.changesCount > 0
            }
            for record in changes.history.values { try SQLiteRegistry.keep(record, in: db) }
            let guests = try db.cachedStatement(
                sql: """
                    INSERT INTO guest_count (store, hour, department, visits, dwell_ms) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(store, hour, department) DO UPDATE SET visits = visits + excluded.visits, dwell_ms = dwell_ms + excluded.dwell_ms
                    """)
            for (key, count) in changes.guestCounts {
                try guests.execute(arguments: [
                    key.store, key.hour.milliseconds, key.department, count.visits, count.dwell.wholeMilliseconds,
                ])
            }
            try SQLiteRegistry.insertSurveySamples(changes.surveySamples, in: db)
            try SQLiteRegistry.keepSurveyMarks(changes.surveyMarks, in: db)
            for (handle, offset) in changes.fobOffsets {
                try db.execute(
                    sql: "UPDATE member_fob SET counterOffset = ? WHERE handle = ?", arguments: [offset, Int64(bitPattern: handle)])
            }
            try SQLiteRegistry.insertWebhookDeliveries(changes.webhookDeliveries, in: db)
            for (fire, time) in changes.promoFires {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO promoFire (member, promo, store, firedAt)
                        SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM member WHERE id = ?)
                        """, arguments: [fire.member, fire.promo, fire.store, time.milliseconds, fire.member])
            }
        }
        // A published `member-forgotten` was the last row naming the member: its old page goes from the log too.
        if purged || !changes.publishedRegistryEvents.isEmpty { try reclaimSpace() } else { try boundWriteAheadLog() }
    }

    /// Above this the write-ahead log is checkpointed whole and emptied after a write (`boundWriteAheadLog`).
    static let writeAheadLogBound = 16 * 1_048_576

    /// Empties the write-ahead log once it passes `writeAheadLogBound`. SQLite restarts the log only when a writer
    /// finds it checkpointed whole and no reader in it; with another connection writing history without pause (other
    /// stores' coordinators) and the coordinator reading, that moment did not come, and the log grew past 180 MB in
    /// seconds, which made every read and write of the file dearer. A `TRUNCATE` checkpoint copies the log into the
    /// file and empties it; it does not wait for a reader of older pages (a report may read for seconds): while one
    /// reads, it copies what it can and the next write tries again.
    func boundWriteAheadLog() throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
        guard size > Self.writeAheadLogBound else { return }
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA busy_timeout = 0")
            defer { try? db.execute(sql: "PRAGMA busy_timeout = \(Self.busyTimeout.wholeMilliseconds)") }
            _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Gives the pages freed by deleted history back to the file system and empties the write-ahead log, which
    /// holds the old pages until a checkpoint (the deleted rows were zeroed: `secure_delete`). A file made with
    /// incremental auto-vacuum frees them at once; an older one is rewritten (VACUUM) once a quarter of it is free.
    func reclaimSpace() throws {
        try database.writeWithoutTransaction { db in
            let incremental = try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") == 2
            if incremental {
                try db.execute(sql: "PRAGMA incremental_vacuum")
            } else {
                let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                if free * 4 > pages {
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                    try db.execute(sql: "VACUUM")
                }
            }
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    // MARK: Visits (restart safety)

    static func save(_ visit: PresenceEngine.Visit, in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO visit (member, store, arrivedAt, department, inDepartmentSince, lastSeen, leftAt, proximity)
                SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM member WHERE id = ?)
                """)
        try statement.execute(arguments: [
            visit.member, visit.store, visit.arrivedAt.milliseconds, visit.department,
            visit.inDepartmentSince.milliseconds, visit.lastSeen.milliseconds,
            visit.leftAt?.milliseconds, visit.proximity.rawValue, visit.member,
        ])
    }

    public func loadVisits(stores: Set<UInt16>?) throws -> [PresenceEngine.Visit] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM visit").filter { stores?.contains($0["store"]) ?? true }.map { row in
                PresenceEngine.Visit(
                    member: row["member"], store: row["store"], arrivedAt: Timestamp(milliseconds: row["arrivedAt"]),
                    department: row["department"], inDepartmentSince: Timestamp(milliseconds: row["inDepartmentSince"]),
                    lastSeen: Timestamp(milliseconds: row["lastSeen"]),
                    leftAt: (row["leftAt"] as Int64?).map(Timestamp.init(milliseconds:)),
                    proximity: Proximity(rawValue: row["proximity"]) ?? .unknown)
            }
        }
    }

    // MARK: Promo history

    /// When each promo last fired for each member: `[member: [promo: time]]`.
    public func promoFires() throws -> [String: [String: Timestamp]] {
        try database.read { db in
            var fires: [String: [String: Timestamp]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT member, promo, firedAt FROM promoFire") {
                fires[row["member"], default: [:]][row["promo"]] = Timestamp(milliseconds: row["firedAt"])
            }
            return fires
        }
    }
}
