import BeaconMeshCore
import Foundation
import GRDB

/// The registry in a SQLite file, through GRDB: the embedded default, one store's back office (and the demo).
///
/// Every change is one transaction; a failed import writes nothing. Opening a database made by an older version
/// upgrades it through the versioned migrations below (GRDB records which ran in `grdb_migrations`).
public final class SQLiteRegistry: MemberRegistry {
    /// A database that cannot be used, in words an IT person understands.
    public typealias Failure = RegistryFailure

    let database: DatabaseQueue
    public let path: String
    public var location: String { path }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public init(path: String) throws(RegistryFailure) {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(Double(Self.busyTimeout.wholeMilliseconds) / 1000)
        configuration.foreignKeysEnabled = true
        // Write-ahead log, synced at checkpoints: a visit count is a quick append, readers (the `members` command)
        // never block the coordinator, and a crash of the process loses nothing (a power cut may lose the last second).
        configuration.prepareDatabase { db in
            // Pages freed by the retention's deletes go back to the file system (`reclaimSpace`). Only a new file
            // takes this, and only before it turns to write-ahead logging: an older file gets a VACUUM instead.
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Deleted rows are overwritten with zeros, so `forget` leaves nothing readable behind.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        do {
            database = try SQLiteRegistry.openAndMigrate(path: path, configuration: configuration)
        } catch let failure as RegistryFailure {
            throw failure
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw Failure(
                .damaged,
                "\(path) is not a BeaconMesh database or is damaged (\(error.message ?? "corrupt")); restore it from a backup or move it away"
            )
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw Failure(.unavailable, "\(path) is locked by another program; stop it or wait, then try again")
        } catch {
            throw Failure(.unavailable, "cannot open the database \(path): \(error)")
        }
    }

    /// Opens the file and brings its schema up to date, also while other programs open the same file at once (a
    /// coordinator, the dashboard and `members` on a new file). GRDB reads which migrations ran, then runs each of the
    /// others in its own transaction, so another program may create the migrations' table or commit a migration in
    /// between, and ours then fails on what it made; a new file's switch to write-ahead logging may find the other's
    /// lock. Each is tried again from the start (reading afresh what ran) for up to `openingPatience`. A damaged file,
    /// or one a newer BeaconMesh migrated, fails at once.
    static func openAndMigrate(path: String, configuration: Configuration) throws -> DatabaseQueue {
        let deadline = ContinuousClock.now + openingPatience
        while true {
            do {
                let database = try DatabaseQueue(path: path, configuration: configuration)
                try migrate(database, path: path)
                return database
            } catch let error as DatabaseError
                where error.resultCode != .SQLITE_NOTADB && error.resultCode != .SQLITE_CORRUPT && ContinuousClock.now < deadline
            {
                Thread.sleep(forTimeInterval: Double.random(in: 0.02...0.1))
            }
        }
    }

    /// How long opening a file may wait for other programs opening it at the same moment.
    static let openingPatience: Duration = .seconds(15)

    /// Runs the migrations `database` lacks; refuses a database a newer BeaconMesh migrated (this program would not
    /// know its tables).
    private static func migrate(_ database: DatabaseQueue, path: String) throws {
        let migrator = Self.migrator
        let unknown = try database.read { try migrator.appliedIdentifiers($0) }.subtracting(migrator.migrations)
        guard unknown.isEmpty else {
            throw Failure(
                .newerSchema,
                "\(path) was upgraded by a newer BeaconMesh (schema \(unknown.sorted().joined(separator: ", "))); run this program's newer version with it"
            )
        }
        try migrator.migrate(database)
    }

    /// How long a statement waits for another connection's lock before it fails with `SQLITE_BUSY`.
    static let busyTimeout: Duration = .seconds(5)

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: members, beacons, visits") { db in
            try db.create(table: "member") { table in
                table.primaryKey("id", .text)
                table.column("name", .text).notNull()
                table.column("favoriteDrink", .text)
                table.column("photo", .text)
                table.column("visits", .integer).notNull().defaults(to: 0)
                table.column("lastVisitAt", .integer)
                table.column("createdAt", .integer)
            }
            try db.create(table: "memberField") { table in
                table.column("member", .text).notNull().references("member", onDelete: .cascade)
                table.column("name", .text).notNull()
                table.column("value", .text).notNull()
                table.primaryKey(["member", "name"])
            }
            try db.create(table: "beacon") { table in
                table.primaryKey("key", .text)
                table.column("member", .text).notNull().indexed().references("member", onDelete: .cascade)
            }
            try db.create(table: "visit") { table in
                table.primaryKey("member", .text).references("member", onDelete: .cascade)
                table.column("store", .integer).notNull()
                table.column("arrivedAt", .integer).notNull()
                table.column("department", .integer).notNull()
                table.column("inDepartmentSince", .integer).notNull()
                table.column("lastSeen", .integer).notNull()
                table.column("leftAt", .integer)
                table.column("proximity", .text).notNull()
            }
        }
        migrator.registerMigration("v2: promo history") { db in
            try db.create(table: "promoFire") { table in
                table.column("member", .text).notNull().references("member", onDelete: .cascade)
                table.column("promo", .text).notNull()
                table.column("store", .integer).notNull()
                table.column("firedAt", .integer).notNull()
                table.primaryKey(["member", "promo"])
            }
        }
        migrator.registerMigration("v3: check-ins, registry events") { db in
            try db.alter(table: "member") { table in table.add(column: "checkins", .integer).notNull().defaults(to: 0) }
            // Check-in requests already handled, so that a redelivery (or a restart) counts none twice.
            try db.create(table: "checkinRequest") { table in
                table.primaryKey("id", .text)
                table.column("at", .integer).notNull().indexed()
            }
            // Registry events waiting for the coordinator to publish them (ids only, never personal data).
            try db.create(table: "registryEvent") { table in
                table.autoIncrementedPrimaryKey("seq")
                table.column("type", .text).notNull()
                table.column("member", .text).notNull()
                table.column("at", .integer).notNull()
            }
        }
        migrator.registerMigration("v4: shared outbox, writes applied once") { db in
            // The coordinator that took an event to publish it (so that each is published once).
            try db.alter(table: "registryEvent") { table in table.add(column: "claimedBy", .text) }
            // Batches of the registry writer already applied: one retried after a lost answer is skipped.
            try db.create(table: "appliedWrite") { table in
                table.primaryKey("id", .text)
                table.column("at", .integer).notNull().indexed()
            }
        }
        migrator.registerMigration("v5: history") { db in
            // Member visits, kept `retention.visits`; erased with the member (`forget`, `remove`). Stored in the order
            // of store and arrival (WITHOUT ROWID: the primary key is the table's order), so a store's period is read
            // in one pass; the member's key is the unique one the stops, offers and check-ins refer to.
            try db.create(table: "visit_history", options: [.withoutRowID]) { table in
                table.column("member", .text).notNull().references("member", onDelete: .cascade)
                table.column("store", .integer).notNull()
                table.column("arrived_at", .integer).notNull()
                table.column("left_at", .integer)
                table.column("number", .integer).notNull()
                table.primaryKey(["store", "arrived_at", "member"])
            }
            try db.create(index: "visit_history_member", on: "visit_history", columns: ["member", "store", "arrived_at"], unique: true)
            try db.create(index: "visit_history_arrived_at", on: "visit_history", columns: ["arrived_at"])
            for (name, columns) in [
                (
                    "visit_stop",
                    [("department", Database.ColumnType.integer), ("name", .text), ("entered_at", .integer), ("dwell_ms", .integer)]
                ),
                ("visit_offer", [("promo", .text), ("department", .integer), ("at", .integer)]),
                ("visit_checkin", [("department", .integer), ("at", .integer)]),
            ] {
                // `finished` repeats whether the visit has ended, so analytics read these rows alone, in store order.
                try db.create(table: name, options: [.withoutRowID]) { table in
                    table.column("member", .text).notNull()
                    table.column("store", .integer).notNull()
                    table.column("arrived_at", .integer).notNull()
                    table.column("position", .integer).notNull()
                    table.column("finished", .integer).notNull()
                    for (column, type) in columns { table.column(column, type).notNull() }
                    table.primaryKey(["store", "arrived_at", "member", "position"])
                    table.foreignKey(
                        ["member", "store", "arrived_at"], references: "visit_history", columns: ["member", "store", "arrived_at"],
                        onDelete: .cascade)
                }
                try db.create(index: "\(name)_member", on: name, columns: ["member", "store", "arrived_at"])
            }
            // Guests, as counts only: never a beacon.
            try db.create(table: "guest_count") { table in
                table.column("store", .integer).notNull()
                table.column("hour", .integer).notNull()
                table.column("department", .integer).notNull()
                table.column("visits", .integer).notNull()
                table.column("dwell_ms", .integer).notNull()
                table.primaryKey(["store", "hour", "department"])
            }
        }
        migrator.registerMigration("v6: member change log") { db in
            // Which members another program (the `members` command) changed, so that the coordinator's change feed
            // reads those members again, not all of them at every commit of anyone (a commit of visit history meant
            // a whole read before, which doubled the coordinator's arrival p99 while other stores wrote history).
            // Filled by triggers, whoever writes; only the last `SQLiteChangeFeed.logLength` changes are kept.
            try db.execute(sql: "CREATE TABLE member_change (seq INTEGER PRIMARY KEY AUTOINCREMENT, member TEXT NOT NULL)")
            try db.execute(
                sql: """
                    CREATE TRIGGER member_change_kept AFTER INSERT ON member_change BEGIN
                        DELETE FROM member_change WHERE seq <= NEW.seq - \(SQLiteChangeFeed.logLength);
                    END
                    """)
            // Every change to a member goes through their `member` row (an import or edit upserts it, fields and
            // beacons with it; a removal deletes it and its rows with it); a beacon given to another member also
            // names its former owner. One log row per member changed: an import of 105,000 took 9.5–10.4 s with a
            // row for each field and beacon too, 6.0–6.8 s without any log.
            try db.execute(
                sql: """
                    CREATE TRIGGER member_inserted AFTER INSERT ON member BEGIN
                        INSERT INTO member_change (member) VALUES (NEW.id);
                    END;
                    CREATE TRIGGER member_updated AFTER UPDATE ON member BEGIN
                        INSERT INTO member_change (member) VALUES (NEW.id);
                    END;
                    CREATE TRIGGER member_deleted AFTER DELETE ON member BEGIN
                        INSERT INTO member_change (member) VALUES (OLD.id);
                    END;
                    CREATE TRIGGER beacon_moved AFTER UPDATE OF member ON beacon WHEN OLD.member IS NOT NEW.member BEGIN
                        INSERT INTO member_change (member) VALUES (OLD.member);
                    END
                    """)
        }
        migrator.registerMigration("v7: indexes of the chain's summaries") { db in
            // The chain's month counts each store's distinct members: read in (store, member) order from an index
            // holding every column the query needs, SQLite counts them as they come, without a sort of the month
            // (storeVisits 4.9 s → 3.3 s for 3.4 million visits; 30 bytes more per visit).
            try db.create(
                index: "visit_history_store_member", on: "visit_history", columns: ["store", "member", "arrived_at", "left_at", "number"])
            // Guests per store over the month from the index alone, not a look-up of each hour's row.
            try db.create(index: "guest_count_store_hour", on: "guest_count", columns: ["store", "hour", "visits"])
        }
        migrator.registerMigration("v8: survey samples and fits") { db in try createSurveyTables(db) }
        return migrator
    }

    // MARK: Members

    @discardableResult
    public func merge(_ records: [MemberRecord]) throws -> ImportSummary {
        try database.write { db in
            var summary = ImportSummary()
            for record in records {
                let existing = try SQLiteRegistry.fetchMember(db, id: record.id)
                var merged = record
                if let existing {
                    merged.profile.visits = max(existing.profile.visits, record.profile.visits)
                    merged.profile.checkins = max(existing.profile.checkins, record.profile.checkins)
                    merged.profile.lastVisitAt = [existing.profile.lastVisitAt, record.profile.lastVisitAt].compactMap { $0 }.max()
                    merged.createdAt = existing.createdAt ?? record.createdAt
                    if SQLiteRegistry.same(existing, merged) {
                        summary.unchanged += 1
                        continue
                    }
                    summary.updated += 1
                    try SQLiteRegistry.recordEvent(.updated, member: record.id, in: db)
                } else {
                    summary.added += 1
                    try SQLiteRegistry.recordEvent(.added, member: record.id, in: db)
                }
                try SQLiteRegistry.store(db, merged)
            }
            return summary
        }
    }

    private static func same(_ lhs: MemberRecord, _ rhs: MemberRecord) -> Bool {
        lhs.profile == rhs.profile && Set(lhs.beacons) == Set(rhs.beacons) && lhs.createdAt == rhs.createdAt
    }

    private static func store(_ db: Database, _ record: MemberRecord) throws {
        let profile = record.profile
        // Cached statements: an import of thousands of members compiles each statement once.
        try db.cachedStatement(
            sql: """
                INSERT INTO member (id, name, favoriteDrink, photo, visits, lastVisitAt, createdAt, checkins) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET name = excluded.name, favoriteDrink = excluded.favoriteDrink, photo = excluded.photo,
                  visits = excluded.visits, lastVisitAt = excluded.lastVisitAt, createdAt = excluded.createdAt, checkins = excluded.checkins
                """
        ).execute(
            arguments: [
                profile.id, profile.name, profile.favoriteDrink, profile.photo, profile.visits,
                profile.lastVisitAt?.milliseconds, record.createdAt?.milliseconds, profile.checkins,
            ])
        try db.cachedStatement(sql: "DELETE FROM memberField WHERE member = ?").execute(arguments: [profile.id])
        let insertField = try db.cachedStatement(sql: "INSERT INTO memberField (member, name, value) VALUES (?, ?, ?)")
        for (name, value) in profile.customFields {
            try insertField.execute(arguments: [profile.id, name, value])
        }
        try db.cachedStatement(sql: "DELETE FROM beacon WHERE member = ?").execute(arguments: [profile.id])
        let insertBeacon = try db.cachedStatement(
            sql: "INSERT INTO beacon (key, member) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET member = excluded.member")
        for beacon in record.beacons {
            try insertBeacon.execute(arguments: [beacon.description, profile.id])
        }
    }

    @discardableResult
    public func remove(id: String) throws -> Bool {
        try database.write { db in
            try db.execute(sql: "DELETE FROM member WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            try SQLiteRegistry.recordEvent(.removed, member: id, in: db)
            return true
        }
    }

    /// Erases a member with their beacons, visits, custom fields, promo history and the survey samples of their
    /// beacons, then rewrites the database file so that no deleted page keeps their data; `false` if there was none.
    @discardableResult
    public func forget(id: String) throws -> Bool {
        let removed = try database.write { db in
            // Survey samples name a beacon, not a member: those of the member's beacons go first, while the beacons
            // still say whose they are.
            try SQLiteRegistry.deleteSurveySamples(ofMember: id, in: db)
            try db.execute(sql: "DELETE FROM member WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            // The change log must not keep the id either: its rows go, and a row naming no one tells the coordinator
            // to read the registry whole, which shows the member gone.
            try db.execute(sql: "DELETE FROM member_change WHERE member = ?", arguments: [id])
            try db.execute(sql: "INSERT INTO member_change (member) VALUES (?)", arguments: [RegistryChange.everyoneLogged])
            try SQLiteRegistry.recordEvent(.forgotten, member: id, in: db)
            return true
        }
        guard removed else { return false }
        try rewriteAndEmptyLog()
        return true
    }

    /// Old copies of deleted rows' pages live on in the write-ahead log until a checkpoint: rewrites the file, then
    /// empties the log.
    func rewriteAndEmptyLog() throws {
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try database.vacuum()
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    public func purgeErased() throws -> Int {
        let waiting = try database.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM registryEvent WHERE type = ?", arguments: [RegistryEvent.Kind.forgotten.rawValue]) ?? 0
        }
        try rewriteAndEmptyLog()
        return waiting
    }

    /// Every member, ordered by id.
    ///
    /// Three queries whatever the number of members (a coordinator reads them all at start and whenever the `members`
    /// command changed something; one query per member and table took 2 s for 20,000 members).
    public func allMembers() throws -> [MemberRecord] {
        try database.read { db in try SQLiteRegistry.records(db, ids: nil) }
    }

    /// The members of `ids` that exist, by id: three queries for each 500 of them, not three per member (the
    /// coordinator reads the members others changed, up to 2,000 at a look).
    public func members(ids: Set<String>) throws -> [MemberRecord] {
        let sorted = ids.sorted()
        return try database.read { db in
            try stride(from: 0, to: sorted.count, by: 500).flatMap { start in
                try SQLiteRegistry.records(db, ids: Array(sorted[start..<min(start + 500, sorted.count)]))
            }
        }
    }

    /// The members of `ids` (`nil`: all), by id, with their custom fields and beacons, in three queries.
    private static func records(_ db: Database, ids: [String]?) throws -> [MemberRecord] {
        let (filter, arguments) =
            ids.map { ("IN (\(databaseQuestionMarks(count: $0.count)))", StatementArguments($0)) } ?? ("IS NOT NULL", [])
        var fields: [String: [String: String]] = [:]
        let fieldRows = try Row.fetchCursor(
            db, sql: "SELECT member, name, value FROM memberField WHERE member \(filter)", arguments: arguments)
        while let row = try fieldRows.next() { fields[row[0], default: [:]][row[1]] = row[2] as String }
        var beacons: [String: [BeaconKey]] = [:]
        let beaconRows = try Row.fetchCursor(
            db, sql: "SELECT member, key FROM beacon WHERE member \(filter) ORDER BY member, key", arguments: arguments)
        while let row = try beaconRows.next() {
            if let key = BeaconKey(row[1] as String) { beacons[row[0], default: []].append(key) }
        }
        return try Row.fetchAll(db, sql: "SELECT * FROM member WHERE id \(filter) ORDER BY id", arguments: arguments).map { row in
            let id: String = row["id"]
            return record(of: row, customFields: fields[id] ?? [:], beacons: beacons[id] ?? [])
        }
    }

    /// One member by id, through cached statements (an import looks each member up).
    private static func fetchMember(_ db: Database, id: String) throws -> MemberRecord? {
        let member = try db.cachedStatement(sql: "SELECT * FROM member WHERE id = ?")
        guard let row = try Row.fetchOne(member, arguments: [id]) else { return nil }
        var custom: [String: String] = [:]
        for field in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, value FROM memberField WHERE member = ?"), arguments: [id]) {
            custom[field["name"]] = field["value"]
        }
        let beacons = try String.fetchAll(db.cachedStatement(sql: "SELECT key FROM beacon WHERE member = ? ORDER BY key"), arguments: [id])
            .compactMap(BeaconKey.init)
        return record(of: row, customFields: custom, beacons: beacons)
    }

    /// The member in a `member` row, with its custom fields and beacons.
    private static func record(of row: Row, customFields: [String: String], beacons: [BeaconKey]) -> MemberRecord {
        let profile = MemberProfile(
            id: row["id"], name: row["name"], favoriteDrink: row["favoriteDrink"], visits: row["visits"],
            lastVisitAt: (row["lastVisitAt"] as Int64?).map(Timestamp.init(milliseconds:)), photo: row["photo"],
            customFields: customFields, checkins: row["checkins"])
        return MemberRecord(
            profile: profile, beacons: beacons,
            createdAt: (row["createdAt"] as Int64?).map(Timestamp.init(milliseconds:)))
    }

    public func contents() throws -> RegistryContents {
        let members = try allMembers()
        var owners: [BeaconKey: String] = [:]
        for member in members {
            for beacon in member.beacons { owners[beacon] = member.id }
        }
        return RegistryContents(
            profiles: Dictionary(uniqueKeysWithValues: members.map { ($0.id, $0.profile) }), beaconOwners: owners,
            promoFires: try promoFires())
    }

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
    private func boundWriteAheadLog() throws {
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

    // MARK: History

    /// Keeps `record` in the history, replacing what was kept under its key (its stops, offers and check-ins too);
    /// nothing for a member that no longer exists.
    private static func keep(_ record: VisitRecord, in db: Database) throws {
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
    private static func analyticsRows(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> [[AnalyticsQuery.Value]] {
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

    // MARK: Visits (restart safety)

    private static func save(_ visit: PresenceEngine.Visit, in db: Database) throws {
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

    // MARK: Check-ins and registry events

    /// The ids of the check-in requests handled since `time`.
    public func checkinRequests(since time: Timestamp) throws -> Set<String> {
        try database.read { db in
            Set(try String.fetchAll(db, sql: "SELECT id FROM checkinRequest WHERE at >= ?", arguments: [time.milliseconds]))
        }
    }

    /// Claims only when something is unclaimed: the coordinator looks every second, and a look that took the write
    /// lock each time would wait out the busy timeout while another program holds the database, ahead of the registry
    /// writer's own writes (a read goes through at once: the write-ahead log lets readers past a writer).
    public func claimRegistryEvents(for coordinator: String) throws -> [PendingRegistryEvent] {
        let unclaimed = try database.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM registryEvent WHERE claimedBy IS NULL)") ?? false
        }
        let claimed = { (db: Database) in
            try Row.fetchAll(
                db, sql: "SELECT seq, type, member, at FROM registryEvent WHERE claimedBy = ? ORDER BY seq", arguments: [coordinator]
            ).compactMap { row -> PendingRegistryEvent? in
                guard let kind = RegistryEvent.Kind(rawValue: row["type"]) else { return nil }
                return PendingRegistryEvent(seq: row["seq"], kind: kind, member: row["member"], at: Timestamp(milliseconds: row["at"]))
            }
        }
        guard unclaimed else { return try database.read(claimed) }
        return try database.write { db in
            try db.execute(sql: "UPDATE registryEvent SET claimedBy = ? WHERE claimedBy IS NULL", arguments: [coordinator])
            return try claimed(db)
        }
    }

    private static func recordEvent(_ kind: RegistryEvent.Kind, member: String, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO registryEvent (type, member, at) VALUES (?, ?, ?)").execute(
            arguments: [kind.rawValue, member, Int64(Date().timeIntervalSince1970 * 1000)])
    }

    // MARK: Change detection

    /// What the member change log holds past `seen`, if another connection committed since `version` (the file's
    /// data version, which only others' commits change): the members named, up to `limit` (more than that, or rows
    /// already dropped from the log: `nil`, read everything). Also the data version and the log's end as they stand.
    func loggedChanges(after seen: Int64, version: Int64, limit: Int) throws -> (version: Int64, last: Int64, members: Set<String>?) {
        try database.read { db in
            // The log's end first: if no one else had committed when the version is read, every change up to it is ours.
            let last = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM member_change") ?? 0
            let current = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
            guard current != version, last > seen else { return (current, last, []) }
            let rows = try Row.fetchAll(
                db, sql: "SELECT seq, member FROM member_change WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [seen, limit + 1])
            guard rows.count <= limit, let first = rows.first, first["seq"] as Int64 == seen + 1 else { return (current, last, nil) }
            let members = Set(rows.map { $0["member"] as String })
            return (current, last, members.contains(RegistryChange.everyoneLogged) ? nil : members)
        }
    }

    /// SQLite tells no one of a commit: the feed looks at the file's data version and the member change log at every
    /// look (cheap reads), and names the members others changed.
    public func changeFeed() throws -> any RegistryChangeFeed {
        let (version, last) = try database.read { db in
            (
                try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0,
                try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM member_change") ?? 0
            )
        }
        return SQLiteChangeFeed(registry: self, version: version, seen: last)
    }

    public func describe(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "the database is locked by another program (SQLITE_BUSY)"
        case .SQLITE_READONLY:
            return "the database is read-only (SQLITE_READONLY): check the file's and its folder's permissions and the file system"
        case .SQLITE_FULL:
            return "the disk or the database is full (SQLITE_FULL): free space on its file system"
        case .SQLITE_IOERR:
            return
                "the database file cannot be written (SQLITE_IOERR, \(error.message ?? "disk I/O error")): check the disk, and the file's permissions and attributes"
        default:
            return "\(error.message ?? "\(error)") (\(error.resultCode))"
        }
    }
}
