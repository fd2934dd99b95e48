import BeaconMeshCore
import Foundation
import GRDB

/// Members: import, removal, forgetting (leaving nothing: the file is rewritten), reads.
extension SQLiteRegistry {
    // MARK: Members

    @discardableResult
    public func merge(_ records: [MemberRecord]) throws -> ImportSummary {
        try database.write { db in
            var summary = ImportSummary()
            for record in records {
                let existing = try SQLiteRegistry.fetchMember(db, id: record.id)
                var merged = record.keepingFob(of: existing)
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

    static func same(_ lhs: MemberRecord, _ rhs: MemberRecord) -> Bool {
        lhs.profile == rhs.profile && Set(lhs.beacons) == Set(rhs.beacons) && lhs.createdAt == rhs.createdAt && lhs.fob == rhs.fob
    }

    static func store(_ db: Database, _ record: MemberRecord) throws {
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
        if let fob = record.fob {
            try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO member_fob (member, sealedKey, rotationExponent, counterOffset, handle) VALUES (?, ?, ?, ?, ?)"
            ).execute(
                arguments: [profile.id, Data(fob.sealedKey), Int64(fob.rotationExponent), fob.offset, Int64(bitPattern: fob.handle)])
        }
    }

    /// The fobs of the members of `ids` (`nil`: all), by member.
    static func fobs(_ db: Database, ids: [String]?) throws -> [String: MemberFob] {
        let (filter, arguments) =
            ids.map { ("IN (\(databaseQuestionMarks(count: $0.count)))", StatementArguments($0)) } ?? ("IS NOT NULL", [])
        var fobs: [String: MemberFob] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT member, sealedKey, rotationExponent, counterOffset, handle FROM member_fob WHERE member \(filter)",
            arguments: arguments)
        {
            fobs[row[0]] = MemberFob(
                sealedKey: [UInt8](row[1] as Data), rotationExponent: UInt8(clamping: row[2] as Int64), offset: row[3],
                handle: UInt64(bitPattern: row[4]))
        }
        return fobs
    }

    @discardableResult
    public func remove(id: String) throws -> Bool {
        try database.write { db in
            try db.execute(sql: "DELETE FROM member WHERE id = ?", arguments: [id])
            guard db.changesCount > 0 else { return false }
            // Webhook bodies not yet delivered that carry her name or photo go too (an id-only one is still owed).
            try db.execute(sql: "DELETE FROM webhook_outbox WHERE member = ?", arguments: [id])
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
            // Webhook bodies not yet delivered that carry her name or photo go too (an id-only one is still owed).
            try db.execute(sql: "DELETE FROM webhook_outbox WHERE member = ?", arguments: [id])
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
    static func records(_ db: Database, ids: [String]?) throws -> [MemberRecord] {
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
        let fobs = try fobs(db, ids: ids)
        return try Row.fetchAll(db, sql: "SELECT * FROM member WHERE id \(filter) ORDER BY id", arguments: arguments).map { row in
            let id: String = row["id"]
            var member = record(of: row, customFields: fields[id] ?? [:], beacons: beacons[id] ?? [])
            member.fob = fobs[id]
            return member
        }
    }

    /// One member by id, through cached statements (an import looks each member up).
    static func fetchMember(_ db: Database, id: String) throws -> MemberRecord? {
        let member = try db.cachedStatement(sql: "SELECT * FROM member WHERE id = ?")
        guard let row = try Row.fetchOne(member, arguments: [id]) else { return nil }
        var custom: [String: String] = [:]
        for field in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, value FROM memberField WHERE member = ?"), arguments: [id]) {
            custom[field["name"]] = field["value"]
        }
        let beacons = try String.fetchAll(db.cachedStatement(sql: "SELECT key FROM beacon WHERE member = ? ORDER BY key"), arguments: [id])
            .compactMap(BeaconKey.init)
        var found = record(of: row, customFields: custom, beacons: beacons)
        found.fob = try fobs(db, ids: [id])[id]
        return found
    }

    /// The member in a `member` row, with its custom fields and beacons.
    static func record(of row: Row, customFields: [String: String], beacons: [BeaconKey]) -> MemberRecord {
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
            promoFires: try promoFires(),
            fobs: Dictionary(uniqueKeysWithValues: members.compactMap { member in member.fob.map { (member.id, $0) } }))
    }
}
