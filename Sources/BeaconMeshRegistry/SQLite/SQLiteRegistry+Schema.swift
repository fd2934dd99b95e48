import BeaconMeshCore
import Foundation
import GRDB

/// The SQLite registry's schema: versioned migrations (GRDB records which ran in `grdb_migrations`).
extension SQLiteRegistry {
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
        migrator.registerMigration("v9: webhook outbox") { db in
            // What each webhook endpoint is owed, in order; `member` names whose personal data a row carries.
            try db.execute(
                sql: """
                    CREATE TABLE webhook_outbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT, endpoint TEXT NOT NULL, store INTEGER NOT NULL,
                        event_id TEXT NOT NULL, body BLOB NOT NULL, member TEXT, created_at INTEGER NOT NULL)
                    """)
            // Read in outbox order, skipping other stores' rows (few: a coordinator delivers for the stores it decides):
            // with the store in the index, a read of 100 stores' backlog sorted the whole backlog at every read.
            try db.execute(sql: "CREATE INDEX webhook_outbox_endpoint ON webhook_outbox (endpoint, seq)")
            try db.execute(sql: "CREATE INDEX webhook_outbox_member ON webhook_outbox (member) WHERE member IS NOT NULL")
        }
        migrator.registerMigration("v10: survey samples say where their department came from") { db in
            try addSurveySampleSources(db)
        }
        migrator.registerMigration("v11: members' Eddystone-EID fobs") { db in
            // The identity key sealed under the secrets key (`MemberFob`); the handle is also among the member's beacons.
            try db.create(table: "member_fob") { table in
                table.primaryKey("member", .text).references("member", onDelete: .cascade)
                table.column("sealedKey", .blob).notNull()
                table.column("rotationExponent", .integer).notNull()
                table.column("counterOffset", .integer).notNull()
                table.column("handle", .integer).notNull()
            }
        }
        migrator.registerMigration("v12: survey marks") { db in try createSurveyMarkTable(db) }
        return migrator
    }
}
