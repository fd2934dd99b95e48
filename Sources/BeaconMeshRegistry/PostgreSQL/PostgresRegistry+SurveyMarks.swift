import BeaconMeshCore
import PostgresNIO

/// The survey marks coordinators hold, in the chain's PostgreSQL: one row per store and beacon (migration 11).
extension PostgresRegistry {
    /// Writes `marks` (kept or ended) inside the caller's transaction (`apply`).
    func keepSurveyMarks(_ marks: [SurveyMarkRecord.Key: SurveyMarkRecord?], _ statements: PostgresSession.Statements) throws {
        for (key, mark) in marks {
            if let mark {
                try statements.execute(
                    """
                    INSERT INTO survey_mark (store, beacon, department, since)
                    VALUES (\(Int32(mark.store)), \(mark.beacon.description), \(mark.department.map { Int32($0) }), \(mark.since.milliseconds))
                    ON CONFLICT (store, beacon) DO UPDATE SET department = excluded.department, since = excluded.since
                    """)
            } else {
                try statements.execute("DELETE FROM survey_mark WHERE store = \(Int32(key.store)) AND beacon = \(key.beacon.description)")
            }
        }
    }

    public func surveyMarks(stores: Set<UInt16>?) throws -> [SurveyMarkRecord] {
        try session.run { statements in
            try statements.query("SELECT store, beacon, department, since FROM survey_mark ORDER BY store, beacon COLLATE \"C\"")
                .compactMap { row in
                    let (store, beacon, department, since) = try row.decode((Int32, String, Int32?, Int64).self)
                    guard let store = UInt16(exactly: store), stores?.contains(store) ?? true, let key = BeaconKey(beacon) else {
                        return nil
                    }
                    return SurveyMarkRecord(
                        store: store, beacon: key, department: department.flatMap { UInt16(exactly: $0) },
                        since: Timestamp(milliseconds: since))
                }
        }
    }
}
