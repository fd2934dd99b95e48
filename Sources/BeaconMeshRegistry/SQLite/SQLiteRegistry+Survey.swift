import BeaconMeshCore
import Foundation
import GRDB

/// Store surveys in the SQLite file: samples, fits and fit versions, in tables keyed by store.
extension SQLiteRegistry {
    /// Migration v8: the survey's tables.
    ///
    /// Samples are kept in the order of store, beacon and time (WITHOUT ROWID: the primary key is the table's
    /// order), so a store's samples are read in one pass in the order training wants, and a second kept twice (a
    /// retried import) is one row; the index on beacon serves `forget`. A fit's version row stays when the fit is
    /// cleared, so its number never goes back to one a coordinator has seen.
    static func createSurveyTables(_ db: Database) throws {
        try db.create(table: "survey_sample", options: [.withoutRowID]) { table in
            table.column("store", .integer).notNull()
            table.column("beacon", .text).notNull()
            table.column("at", .integer).notNull()
            table.column("department", .integer).notNull()
            table.column("readings", .text).notNull()
            table.primaryKey(["store", "beacon", "at"])
        }
        try db.create(index: "survey_sample_beacon", on: "survey_sample", columns: ["beacon"])
        try db.create(table: "survey_fit") { table in
            table.primaryKey("store", .integer)
            table.column("fitted_at", .integer).notNull()
            table.column("accuracy", .double).notNull()
            table.column("fit", .blob).notNull()
        }
        try db.create(table: "survey_version") { table in
            table.primaryKey("store", .integer)
            table.column("version", .integer).notNull()
        }
    }

    public func addSurveySamples(_ samples: [SurveySample]) throws {
        guard !samples.isEmpty else { return }
        try database.write { db in try Self.insertSurveySamples(samples, in: db) }
    }

    /// Adds `samples` inside the caller's transaction (`addSurveySamples`, and `apply` for a coordinator's).
    static func insertSurveySamples(_ samples: [SurveySample], in db: Database) throws {
        guard !samples.isEmpty else { return }
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO survey_sample (store, beacon, at, department, readings, source) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """)
        for sample in samples {
            try insert.execute(arguments: [
                sample.store, sample.beacon.description, sample.at.milliseconds, sample.department, sample.readingsText,
                sample.source.rawValue,
            ])
        }
    }

    /// Deletes the samples of `member`'s beacons, inside `forget`'s transaction (before the beacons go).
    static func deleteSurveySamples(ofMember member: String, in db: Database) throws {
        try db.execute(
            sql: "DELETE FROM survey_sample WHERE beacon IN (SELECT key FROM beacon WHERE member = ?)", arguments: [member])
        try db.execute(sql: "DELETE FROM survey_mark WHERE beacon IN (SELECT key FROM beacon WHERE member = ?)", arguments: [member])
    }

    public func surveySamples(store: UInt16) throws -> [SurveySample] {
        try database.read { db in
            let rows = try Row.fetchCursor(
                db, sql: "SELECT beacon, at, department, readings, source FROM survey_sample WHERE store = ? ORDER BY beacon, at",
                arguments: [store])
            var samples: [SurveySample] = []
            while let row = try rows.next() {
                samples.append(
                    try SurveyRows.sample(store: store, beacon: row[0], department: row[2], at: row[1], readings: row[3], source: row[4]))
            }
            return samples
        }
    }

    public func surveyBeacons(_ beacons: Set<BeaconKey>, store: UInt16) throws -> [BeaconKey: SurveyBeaconOwner] {
        let keys = beacons.map(\.description).sorted()
        guard !keys.isEmpty else { return [:] }
        return try database.read { db in
            var owners: [BeaconKey: SurveyBeaconOwner] = [:]
            // One sample per beacon (LIMIT 1 through the beacon index): a reference keeps a sample every 10 s all
            // day, and the page asks every few seconds.
            let reference = try db.makeStatement(
                sql: "SELECT department FROM survey_sample WHERE beacon = ? AND store = ? AND source = 'reference' LIMIT 1")
            let member = try db.makeStatement(
                sql: "SELECT member.id, member.name FROM beacon JOIN member ON member.id = beacon.member WHERE beacon.key = ?")
            for key in keys {
                guard let beacon = BeaconKey(key) else { continue }
                if let row = try Row.fetchOne(member, arguments: [key]) {
                    owners[beacon] = .member(id: row[0], name: row[1])
                } else if let department = try Int64.fetchOne(reference, arguments: [key, Int64(store)]),
                    let department = UInt16(exactly: department)
                {
                    owners[beacon] = .reference(department: department)
                }
            }
            return owners
        }
    }

    public func surveySecondsBySource(store: UInt16) throws -> [UInt16: [SurveySample.Source: Int]] {
        try database.read { db in
            var seconds: [UInt16: [SurveySample.Source: Int]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT department, source, COUNT(*) FROM survey_sample WHERE store = ? GROUP BY department, source",
                arguments: [store])
            {
                guard let department = UInt16(exactly: row[0] as Int64) else { continue }
                seconds[department, default: [:]][SurveySample.Source(rawValue: row[1]) ?? .walk, default: 0] += row[2] as Int
            }
            return seconds
        }
    }

    /// Migration v10: each sample says where its department came from (`SurveySample.Source`; before, every
    /// sample was a walk's).
    static func addSurveySampleSources(_ db: Database) throws {
        try db.alter(table: "survey_sample") { table in table.add(column: "source", .text).notNull().defaults(to: "walk") }
    }

    public func surveySeconds(store: UInt16) throws -> [UInt16: Int] {
        try database.read { db in
            var seconds: [UInt16: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT department, COUNT(*) FROM survey_sample WHERE store = ? GROUP BY department", arguments: [store])
            {
                if let department = UInt16(exactly: row[0] as Int64) { seconds[department] = row[1] }
            }
            return seconds
        }
    }

    public func saveSurveyFit(_ fit: SurveyFit) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO survey_fit (store, fitted_at, accuracy, fit) VALUES (?, ?, ?, ?)",
                arguments: [fit.store, fit.fittedAt.milliseconds, fit.accuracy, Data(fit.encoded())])
            try Self.bumpSurveyVersion(store: fit.store, in: db)
        }
    }

    public func surveyFit(store: UInt16) throws -> SurveyFit? {
        let bytes = try database.read { db in
            try Data.fetchOne(db, sql: "SELECT fit FROM survey_fit WHERE store = ?", arguments: [store])
        }
        guard let bytes else { return nil }
        return try SurveyRows.fit(store: store, bytes: Array(bytes))
    }

    public func surveyFitVersions(stores: Set<UInt16>?) throws -> [UInt16: Int64] {
        try database.read { db in
            var versions: [UInt16: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT store, version FROM survey_version") {
                guard let store = UInt16(exactly: row[0] as Int64), stores?.contains(store) ?? true else { continue }
                versions[store] = row[1]
            }
            return versions
        }
    }

    @discardableResult
    public func clearSurvey(store: UInt16) throws -> (samples: Int, fit: Bool) {
        try database.write { db in
            try db.execute(sql: "DELETE FROM survey_sample WHERE store = ?", arguments: [store])
            let samples = db.changesCount
            try db.execute(sql: "DELETE FROM survey_fit WHERE store = ?", arguments: [store])
            let fit = db.changesCount > 0
            if fit { try Self.bumpSurveyVersion(store: store, in: db) }
            return (samples, fit)
        }
    }

    private static func bumpSurveyVersion(store: UInt16, in db: Database) throws {
        try db.execute(
            sql: "INSERT INTO survey_version (store, version) VALUES (?, 1) ON CONFLICT(store) DO UPDATE SET version = version + 1",
            arguments: [store])
    }
}
