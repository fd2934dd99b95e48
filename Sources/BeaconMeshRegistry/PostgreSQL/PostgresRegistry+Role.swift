import PostgresNIO

extension PostgresRegistry {
    /// Makes (or updates) the login role a coordinator, the `members` command or the dashboard uses, with least
    /// privilege: it may connect to this database, read and write the registry's rows and use its sequences, and
    /// nothing else — it owns no table, may create nothing in the schema (no DDL once migrated), and reaches no other
    /// schema. Run it connected as the database's owner (who migrated the schema, as `init` just did).
    ///
    /// `name` must be a plain identifier and `password` letters and digits: both go into SQL that takes no
    /// parameters, so anything else is refused.
    public func provisionRole(_ name: String, password: String) throws {
        guard let first = name.first, first.isLetter || first == "_", name.count <= 63,
            name.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" }), name == name.lowercased()
        else {
            throw RegistryFailure(
                .invalidRequest, "the role name '\(name)' must be lower-case letters, digits and _, starting with a letter")
        }
        guard !password.isEmpty, password.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw RegistryFailure(.invalidRequest, "a role's password must be letters and digits")
        }
        try session.transaction { statements in
            let exists = try statements.query("SELECT 1 FROM pg_roles WHERE rolname = \(name)").isEmpty == false
            let verb = exists ? "ALTER" : "CREATE"
            let database = try statements.query("SELECT current_database()").first?.decode(String.self) ?? ""
            for sql in [
                "\(verb) ROLE \"\(name)\" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD '\(password)'",
                "REVOKE ALL ON DATABASE \"\(database)\" FROM PUBLIC",
                "GRANT CONNECT ON DATABASE \"\(database)\" TO \"\(name)\"",
                "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
                "GRANT USAGE ON SCHEMA public TO \"\(name)\"",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \"\(name)\"",
                "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO \"\(name)\"",
            ] {
                try statements.execute(PostgresQuery(unsafeSQL: sql))
            }
        }
    }
}
