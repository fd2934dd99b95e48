import BeaconMeshCore
import Foundation
import GRDB

/// Check-in requests handled, the registry events' outbox, and the change log the change feed reads.
extension SQLiteRegistry {
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

    static func recordEvent(_ kind: RegistryEvent.Kind, member: String, in db: Database) throws {
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
}
