import BeaconMeshCore
import PostgresNIO

extension PostgresRegistry {
    /// PostgreSQL keeps a deleted row's bytes in its table file (a dead tuple) until a vacuum, in the statistics
    /// ANALYZE sampled, and in the write-ahead log. As the database's owner, this rewrites every table of the
    /// registry and the statistics (`VACUUM FULL`: new files, the old ones deleted), then starts a new write-ahead log
    /// file and checkpoints, so that the files holding the old rows are removed (with `wal_recycle = off`; otherwise
    /// they would be renamed for reuse with their contents, so that is refused). The owner needs the `pg_checkpoint`
    /// role and `EXECUTE` on `pg_switch_wal()` (`deploy/postgres/headoffice.sql` grants both).
    /// How long one statement of `purgeErased` may take (a `VACUUM FULL` of a large table).
    static let purgeStatementTimeout: Duration = .seconds(3600)

    public func purgeErased() throws -> Int {
        let (waiting, tables, recycles) = try session.run { statements in
            let waiting =
                try statements.query(
                    "SELECT count(*) FROM registry_event WHERE type = \(RegistryEvent.Kind.forgotten.rawValue)"
                ).first?.decode(Int.self) ?? 0
            let tables = try statements.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
                .map { try $0.decode(String.self) }
            let recycles = try statements.query("SELECT current_setting('wal_recycle')").first?.decode(String.self) == "on"
            return (waiting, tables, recycles)
        }
        guard !recycles else {
            throw RegistryFailure(
                .invalidRequest,
                "wal_recycle is on: PostgreSQL renames old write-ahead log files for reuse, forgotten members' rows still in them; set wal_recycle = off"
            )
        }
        // Rewriting a chain's tables takes longer than a query may (the registry's session gives each 10 s): a
        // connection of its own, closed after, with an hour for each statement (connecting, 10 s as ever).
        let rewriting = try PostgresSession(
            settings: settings, password: password, logger: logger, timeout: Self.purgeStatementTimeout, connectTimeout: .seconds(10))
        defer { rewriting.close() }
        try rewriting.run { statements in
            for table in tables {
                try statements.execute(PostgresQuery(unsafeSQL: "VACUUM (FULL, ANALYZE) public.\"\(table)\""))
            }
            // ANALYZE wrote new statistics: the old ones are dead rows of pg_statistic now.
            try statements.execute(PostgresQuery(unsafeSQL: "VACUUM (FULL) pg_catalog.pg_statistic"))
            try statements.query("SELECT pg_switch_wal()")
            try statements.execute(PostgresQuery(unsafeSQL: "CHECKPOINT"))
        }
        return waiting
    }
}
