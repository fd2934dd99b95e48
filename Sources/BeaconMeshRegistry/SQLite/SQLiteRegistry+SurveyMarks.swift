import BeaconMeshCore
import GRDB

/// The survey marks coordinators hold, in the SQLite file: one row per store and beacon.
extension SQLiteRegistry {
    /// Migration v12: the marks' table.
    static func createSurveyMarkTable(_ db: Database) throws {
        try db.create(table: "survey_mark", options: [.withoutRowID]) { table in
            table.column("store", .integer).notNull()
            table.column("beacon", .text).notNull()
            table.column("department", .integer)
            table.column("since", .integer).notNull()
            table.primaryKey(["store", "beacon"])
        }
    }

    /// Writes `marks` (kept or ended) inside the caller's transaction (`apply`).
    static func keepSurveyMarks(_ marks: [SurveyMarkRecord.Key: SurveyMarkRecord?], in db: Database) throws {
        for (key, mark) in marks {
            if let mark {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO survey_mark (store, beacon, department, since) VALUES (?, ?, ?, ?)",
                    arguments: [mark.store, mark.beacon.description, mark.department, mark.since.milliseconds])
            } else {
                try db.execute(
                    sql: "DELETE FROM survey_mark WHERE store = ? AND beacon = ?", arguments: [key.store, key.beacon.description])
            }
        }
    }

    public func surveyMarks(stores: Set<UInt16>?) throws -> [SurveyMarkRecord] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT store, beacon, department, since FROM survey_mark ORDER BY store, beacon").compactMap { row in
                guard let store = UInt16(exactly: row[0] as Int64), stores?.contains(store) ?? true,
                    let beacon = BeaconKey(row[1] as String)
                else { return nil }
                let department = (row[2] as Int64?).flatMap { UInt16(exactly: $0) }
                return SurveyMarkRecord(store: store, beacon: beacon, department: department, since: Timestamp(milliseconds: row[3]))
            }
        }
    }
}
