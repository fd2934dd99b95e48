import BeaconMeshCore
import NIOCore
import PostgresNIO

/// Store surveys in the chain's database (schema version 4): every store's samples, fits and fit versions, keyed by
/// store, so a store's survey lives with it whichever coordinator decides it.
extension PostgresRegistry {
    public func addSurveySamples(_ samples: [SurveySample]) throws {
        guard !samples.isEmpty else { return }
        try session.transaction { statements in try insertSurveySamples(samples, statements) }
    }

    /// Adds `samples` inside the caller's transaction (`addSurveySamples`, and `apply` for a coordinator's), a few
    /// thousand to a statement whatever their number (an import of hours of walks).
    func insertSurveySamples(_ samples: [SurveySample], _ statements: PostgresSession.Statements) throws {
        for start in stride(from: 0, to: samples.count, by: 5000) {
            let slice = samples[start..<min(samples.count, start + 5000)]
            try statements.execute(
                """
                INSERT INTO survey_sample (store, beacon, at, department, readings, source)
                SELECT * FROM unnest(\(slice.map { Int32($0.store) })::integer[], \(slice.map(\.beacon.description))::text[],
                    \(slice.map(\.at.milliseconds))::bigint[], \(slice.map { Int32($0.department) })::integer[],
                    \(slice.map(\.readingsText))::text[], \(slice.map(\.source.rawValue))::text[])
                ON CONFLICT DO NOTHING
                """)
        }
    }

    /// Deletes the samples of `member`'s beacons, inside `forget`'s transaction (before the beacons go).
    func deleteSurveySamples(ofMember member: String, _ statements: PostgresSession.Statements) throws {
        try statements.execute("DELETE FROM survey_sample WHERE beacon IN (SELECT key FROM beacon WHERE member = \(member))")
        try statements.execute("DELETE FROM survey_mark WHERE beacon IN (SELECT key FROM beacon WHERE member = \(member))")
    }

    /// In byte order of the beacon key, as SQLite orders them (not the database's collation).
    public func surveySamples(store: UInt16) throws -> [SurveySample] {
        try session.run { statements in
            try statements.query(
                """
                SELECT beacon, at, department, readings, source FROM survey_sample WHERE store = \(Int32(store))
                ORDER BY beacon COLLATE "C", at
                """
            ).map { row in
                let (beacon, at, department, readings, source) = try row.decode((String, Int64, Int32, String, String).self)
                return try SurveyRows.sample(
                    store: store, beacon: beacon, department: Int64(department), at: at, readings: readings, source: source)
            }
        }
    }

    public func surveyBeacons(_ beacons: Set<BeaconKey>, store: UInt16) throws -> [BeaconKey: SurveyBeaconOwner] {
        let keys = beacons.map(\.description).sorted()
        guard !keys.isEmpty else { return [:] }
        return try session.run { statements in
            var owners: [BeaconKey: SurveyBeaconOwner] = [:]
            for row in try statements.query(
                // One sample per beacon (LIMIT 1 through the beacon index): a reference keeps a sample every 10 s
                // all day, and the page asks every few seconds.
                """
                SELECT heard.beacon, sample.department FROM unnest(\(keys)::text[]) AS heard(beacon)
                CROSS JOIN LATERAL (
                    SELECT department FROM survey_sample
                    WHERE beacon = heard.beacon AND store = \(Int32(store)) AND source = 'reference' LIMIT 1
                ) AS sample
                """)
            {
                let (beacon, department) = try row.decode((String, Int32).self)
                if let key = BeaconKey(beacon), let department = UInt16(exactly: department) {
                    owners[key] = .reference(department: department)
                }
            }
            for row in try statements.query(
                "SELECT beacon.key, member.id, member.name FROM beacon JOIN member ON member.id = beacon.member WHERE beacon.key = ANY(\(keys))"
            ) {
                let (beacon, id, name) = try row.decode((String, String, String).self)
                if let key = BeaconKey(beacon) { owners[key] = .member(id: id, name: name) }
            }
            return owners
        }
    }

    public func surveySecondsBySource(store: UInt16) throws -> [UInt16: [SurveySample.Source: Int]] {
        try session.run { statements in
            var seconds: [UInt16: [SurveySample.Source: Int]] = [:]
            for row in try statements.query(
                "SELECT department, source, COUNT(*) FROM survey_sample WHERE store = \(Int32(store)) GROUP BY department, source")
            {
                let (department, source, count) = try row.decode((Int32, String, Int64).self)
                guard let department = UInt16(exactly: department) else { continue }
                seconds[department, default: [:]][SurveySample.Source(rawValue: source) ?? .walk, default: 0] += Int(count)
            }
            return seconds
        }
    }

    public func surveySeconds(store: UInt16) throws -> [UInt16: Int] {
        try session.run { statements in
            var seconds: [UInt16: Int] = [:]
            for row in try statements.query(
                "SELECT department, COUNT(*) FROM survey_sample WHERE store = \(Int32(store)) GROUP BY department")
            {
                let (department, count) = try row.decode((Int32, Int64).self)
                if let department = UInt16(exactly: department) { seconds[department] = Int(count) }
            }
            return seconds
        }
    }

    public func saveSurveyFit(_ fit: SurveyFit) throws {
        try session.transaction { statements in
            try statements.execute(
                """
                INSERT INTO survey_fit (store, fitted_at, accuracy, fit)
                VALUES (\(Int32(fit.store)), \(fit.fittedAt.milliseconds), \(fit.accuracy), \(ByteBuffer(bytes: fit.encoded())))
                ON CONFLICT (store) DO UPDATE SET fitted_at = excluded.fitted_at, accuracy = excluded.accuracy, fit = excluded.fit
                """)
            try bumpSurveyVersion(store: fit.store, statements)
        }
    }

    public func surveyFit(store: UInt16) throws -> SurveyFit? {
        let bytes = try session.run { statements in
            try statements.query("SELECT fit FROM survey_fit WHERE store = \(Int32(store))").first.map { row in
                Array(try row.decode(ByteBuffer.self).readableBytesView)
            }
        }
        guard let bytes else { return nil }
        return try SurveyRows.fit(store: store, bytes: bytes)
    }

    public func surveyFitVersions(stores: Set<UInt16>?) throws -> [UInt16: Int64] {
        let scope = (stores ?? []).map { Int32($0) }
        return try session.run { statements in
            var versions: [UInt16: Int64] = [:]
            for row in try statements.query(
                "SELECT store, version FROM survey_version WHERE \(stores == nil) OR store = ANY(\(scope))")
            {
                let (store, version) = try row.decode((Int32, Int64).self)
                if let store = UInt16(exactly: store) { versions[store] = version }
            }
            return versions
        }
    }

    @discardableResult
    public func clearSurvey(store: UInt16) throws -> (samples: Int, fit: Bool) {
        try session.transaction { statements in
            let samples = try statements.execute("DELETE FROM survey_sample WHERE store = \(Int32(store))")
            let fit = try statements.execute("DELETE FROM survey_fit WHERE store = \(Int32(store))") > 0
            if fit { try bumpSurveyVersion(store: store, statements) }
            return (samples, fit)
        }
    }

    private func bumpSurveyVersion(store: UInt16, _ statements: PostgresSession.Statements) throws {
        try statements.execute(
            """
            INSERT INTO survey_version (store, version) VALUES (\(Int32(store)), 1)
            ON CONFLICT (store) DO UPDATE SET version = survey_version.version + 1
            """)
    }
}
