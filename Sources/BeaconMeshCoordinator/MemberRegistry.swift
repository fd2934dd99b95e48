import BeaconMeshCore
import Foundation
import GRDB

/// The coordinator's SQLite database: members, their beacons, loyalty counts, open visits and promo history.
///
/// Every change is one transaction; a failed import writes nothing. Opening a database made by an older version
/// upgrades it through the versioned migrations below.
public final class MemberRegistry: Sendable {
    /// A database that cannot be used, in words an IT person understands.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private let database: DatabaseQueue
    public let path: String

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public init(path: String) throws(Failure) {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.foreignKeysEnabled = true
        // Write-ahead log, synced at checkpoints: a visit count is a quick append, readers (the `members` command)
        // never block the coordinator, and a crash of the process loses nothing (a power cut may lose the last second).
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Deleted rows are overwritten with zeros, so `forget` leaves nothing readable behind.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            try MemberRegistry.migrator.migrate(database)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw Failure(
                description:
                    "\(path) is not a BeaconMesh database or is damaged (\(error.message ?? "corrupt")); restore it from a backup or move it away"
            )
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw Failure(description: "\(path) is locked by another program; stop it or wait, then try again")
        } catch {
            throw Failure(description: "cannot open the database \(path): \(error)")
        }
    }

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
        return migrator
    }

    // MARK: Members

    /// What an import did.
    public struct ImportSummary: Equatable, Sendable, CustomStringConvertible {
        public var added = 0
        public var updated = 0
        public var unchanged = 0
        public var description: String { "\(added) added, \(updated) updated, \(unchanged) unchanged" }
    }

    /// Merges `records` by id in one transaction: new ids are added; for known ones the file's profile and beacons
    /// replace the stored ones, while the larger `visits` and the later `lastVisitAt` win.
    @discardableResult
    public func merge(_ records: [MemberRecord]) throws -> ImportSummary {
        try database.write { db in
            var summary = ImportSummary()
            for record in records {
                let existing = try MemberRegistry.fetchMember(db, id: record.id)
                var merged = record
                if let existing {
                    merged.profile.visits = max(existing.profile.visits, record.profile.visits)
                    merged.profile.checkins = max(existing.profile.checkins, record.profile.checkins)
                    merged.profile.lastVisitAt = [existing.profile.lastVisitAt, record.profile.lastVisitAt].compactMap { $0 }.max()
                    merged.createdAt = existing.createdAt ?? record.createdAt
                    if MemberRegistry.same(existing, merged) {
                        summary.unchanged += 1
                        continue
                    }
                    summary.updated += 1
                    try MemberRegistry.recordEvent(.updated, member: record.id, in: db)
                } else {
                    summary.added += 1
                    try MemberRegistry.recordEvent(.added, member: record.id, in: db)
                }
                try MemberRegistry.store(db, merged)
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

    /// Adds one member, or replaces the one with the same id (keeping its loyalty counts).
    public func upsert(_ record: MemberRecord) throws {
        try merge([record])
    }

    /// Removes a member and everything kept about them; `false` if there was none.
    @discardableResult
    public func remove(id: String) throws -> Bool {
        try database.write { db in
            try db.execute(sql: "DELETE FROM member WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            try MemberRegistry.recordEvent(.removed, member: id, in: db)
            return true
        }
    }

    /// Erases a member with their beacons, visits, custom fields and promo history, then rewrites the database
    /// file so that no deleted page keeps their data; `false` if there was none.
    @discardableResult
    public func forget(id: String) throws -> Bool {
        let removed = try database.write { db in
            try db.execute(sql: "DELETE FROM member WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            try MemberRegistry.recordEvent(.forgotten, member: id, in: db)
            return true
        }
        guard removed else { return false }
        // Old copies of the pages live on in the write-ahead log until a checkpoint: rewrite the file, then empty
        // the log.
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try database.vacuum()
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        return true
    }

    /// Every member, ordered by id.
    ///
    /// Three queries whatever the number of members (a coordinator reads them all at start and whenever the `members`
    /// command changed something; one query per member and table took 2 s for 20,000 members).
    public func allMembers() throws -> [MemberRecord] {
        try database.read { db in
            var fields: [String: [String: String]] = [:]
            let fieldRows = try Row.fetchCursor(db, sql: "SELECT member, name, value FROM memberField")
            while let row = try fieldRows.next() { fields[row["member"], default: [:]][row["name"]] = row["value"] as String }
            var beacons: [String: [BeaconKey]] = [:]
            let beaconRows = try Row.fetchCursor(db, sql: "SELECT member, key FROM beacon ORDER BY member, key")
            while let row = try beaconRows.next() {
                if let key = BeaconKey(row["key"] as String) { beacons[row["member"], default: []].append(key) }
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM member ORDER BY id").map { row in
                let id: String = row["id"]
                return MemberRegistry.record(of: row, customFields: fields[id] ?? [:], beacons: beacons[id] ?? [])
            }
        }
    }

    /// One member, if known.
    public func member(id: String) throws -> MemberRecord? {
        try database.read { db in try MemberRegistry.fetchMember(db, id: id) }
    }

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

    /// Which member owns which beacon.
    public func beaconOwners() throws -> [BeaconKey: String] {
        try database.read { db in
            var owners: [BeaconKey: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT key, member FROM beacon") {
                if let key = BeaconKey(row["key"] as String) { owners[key] = row["member"] }
            }
            return owners
        }
    }

    /// Member profiles by id (for enriching events and snapshots).
    public func profiles() throws -> [String: MemberProfile] {
        Dictionary(uniqueKeysWithValues: try allMembers().map { ($0.id, $0.profile) })
    }

    /// What the coordinator works from: profiles, who owns which beacon, promo history — read together.
    public struct Contents: Sendable {
        public var profiles: [String: MemberProfile]
        public var beaconOwners: [BeaconKey: String]
        public var promoFires: [String: [String: Timestamp]]
    }

    /// Profiles, beacon owners and promo history.
    public func contents() throws -> Contents {
        Contents(profiles: try profiles(), beaconOwners: try beaconOwners(), promoFires: try promoFires())
    }

    // MARK: Loyalty

    /// Writes `changes` in one transaction: visits saved or deleted, visit counts (the larger count wins, and the
    /// last visit time goes with it), promo firings. Rows of members that no longer exist are skipped.
    public func apply(_ changes: RegistryChanges) throws {
        guard !changes.isEmpty else { return }
        try database.write { db in
            for (member, visit) in changes.visits {
                if let visit {
                    try MemberRegistry.save(visit, in: db)
                } else {
                    try db.execute(sql: "DELETE FROM visit WHERE member = ?", arguments: [member])
                }
            }
            let count = try db.cachedStatement(sql: "UPDATE member SET visits = ?, lastVisitAt = ? WHERE id = ? AND visits < ?")
            for (member, counted) in changes.counts {
                try count.execute(arguments: [counted.visits, counted.at.milliseconds, member, counted.visits])
            }
            let checkins = try db.cachedStatement(sql: "UPDATE member SET checkins = ? WHERE id = ? AND checkins < ?")
            for (member, count) in changes.checkins {
                try checkins.execute(arguments: [count, member, count])
            }
            for (request, time) in changes.checkinRequests {
                try db.execute(sql: "INSERT OR IGNORE INTO checkinRequest (id, at) VALUES (?, ?)", arguments: [request, time.milliseconds])
            }
            if let before = changes.forgetCheckinRequestsBefore {
                try db.execute(sql: "DELETE FROM checkinRequest WHERE at < ?", arguments: [before.milliseconds])
            }
            for seq in changes.publishedRegistryEvents {
                try db.cachedStatement(sql: "DELETE FROM registryEvent WHERE seq = ?").execute(arguments: [seq])
            }
            for (fire, time) in changes.promoFires {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO promoFire (member, promo, store, firedAt)
                        SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM member WHERE id = ?)
                        """, arguments: [fire.member, fire.promo, fire.store, time.milliseconds, fire.member])
            }
        }
    }

    // MARK: Visits (restart safety)

    /// Saves (or replaces) the visits of some members.
    public func saveVisits(of visits: [PresenceEngine.Visit]) throws {
        guard !visits.isEmpty else { return }
        try database.write { db in
            for visit in visits { try MemberRegistry.save(visit, in: db) }
        }
    }

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

    /// Deletes the saved visits of `members` (visits that ended for good).
    public func deleteVisits(of members: [String]) throws {
        guard !members.isEmpty else { return }
        try database.write { db in
            for member in members { try db.execute(sql: "DELETE FROM visit WHERE member = ?", arguments: [member]) }
        }
    }

    /// The visits saved by `saveVisits`.
    public func loadVisits() throws -> [PresenceEngine.Visit] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM visit").map { row in
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

    /// Records that `promo` fired for `member` at `time` (replacing the previous firing).
    public func recordPromoFire(member: String, promo: String, store: UInt16, at time: Timestamp) throws {
        var changes = RegistryChanges()
        changes.promoFired(promo, member: member, store: store, at: time)
        try apply(changes)
    }

    // MARK: Check-ins and registry events

    /// The ids of the check-in requests handled since `time`.
    public func checkinRequests(since time: Timestamp) throws -> Set<String> {
        try database.read { db in
            Set(try String.fetchAll(db, sql: "SELECT id FROM checkinRequest WHERE at >= ?", arguments: [time.milliseconds]))
        }
    }

    /// Registry events not yet published, oldest first, each with its sequence number in the outbox.
    public func pendingRegistryEvents() throws -> [(seq: Int64, kind: RegistryEvent.Kind, member: String, at: Timestamp)] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT seq, type, member, at FROM registryEvent ORDER BY seq").compactMap { row in
                guard let kind = RegistryEvent.Kind(rawValue: row["type"]) else { return nil }
                return (row["seq"], kind, row["member"], Timestamp(milliseconds: row["at"]))
            }
        }
    }

    private static func recordEvent(_ kind: RegistryEvent.Kind, member: String, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO registryEvent (type, member, at) VALUES (?, ?, ?)").execute(
            arguments: [kind.rawValue, member, Int64(Date().timeIntervalSince1970 * 1000)])
    }

    // MARK: Change detection

    /// A number that changes whenever another connection (the `members` command) commits to the database.
    public func dataVersion() throws -> Int64 {
        try database.read { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
    }
}
