import PostgresNIO

/// The PostgreSQL registry's schema, as numbered migrations: each runs once, in order, recorded in
/// `schema_migration`. All of it happens in one transaction holding a transaction-level advisory lock, so
/// coordinators starting together migrate once (the others wait, then find nothing to do). When nothing is
/// missing no DDL runs at all, so a coordinator's role needs no right to change the schema once it is migrated.
enum PostgresSchema {
    /// The advisory lock's key (any constant that BeaconMesh alone uses: "BMRG").
    static let lockKey: Int64 = 0x424D_5247
    /// The channel on which every member change is announced: `{backend pid}:{seq}`, the change's row in the log
    /// `member_change` (since migration 6; ids stayed in PostgreSQL's notification queue files, issue 37).
    static let channel = "beaconmesh_registry"
    /// How many of the latest member changes `member_change` keeps: a listener that has not read a change by then
    /// reads everything.
    static let changeLogLength = 10_000

    static let migrations: [(version: Int, name: String, sql: [String])] = [
        (
            1, "members, beacons, visits, promo history, check-ins, registry events",
            [
                """
                CREATE TABLE member (
                    id text PRIMARY KEY, name text NOT NULL, favorite_drink text, photo text,
                    visits bigint NOT NULL DEFAULT 0, checkins bigint NOT NULL DEFAULT 0,
                    last_visit_at bigint, created_at bigint)
                """,
                """
                CREATE TABLE member_field (
                    member text NOT NULL REFERENCES member(id) ON DELETE CASCADE, name text NOT NULL, value text NOT NULL,
                    PRIMARY KEY (member, name))
                """,
                """
                CREATE TABLE beacon (key text PRIMARY KEY, member text NOT NULL REFERENCES member(id) ON DELETE CASCADE)
                """,
                "CREATE INDEX beacon_member ON beacon (member)",
                """
                CREATE TABLE visit (
                    member text NOT NULL REFERENCES member(id) ON DELETE CASCADE, store integer NOT NULL,
                    arrived_at bigint NOT NULL, department integer NOT NULL, in_department_since bigint NOT NULL,
                    last_seen bigint NOT NULL, left_at bigint, proximity text NOT NULL, PRIMARY KEY (member, store))
                """,
                """
                CREATE TABLE promo_fire (
                    member text NOT NULL REFERENCES member(id) ON DELETE CASCADE, promo text NOT NULL,
                    store integer NOT NULL, fired_at bigint NOT NULL, PRIMARY KEY (member, promo))
                """,
                "CREATE TABLE checkin_request (id text PRIMARY KEY, at bigint NOT NULL)",
                "CREATE INDEX checkin_request_at ON checkin_request (at)",
                """
                CREATE TABLE registry_event (
                    seq bigserial PRIMARY KEY, type text NOT NULL, member text NOT NULL, at bigint NOT NULL, claimed_by text)
                """,
                "CREATE TABLE applied_write (id text PRIMARY KEY, at bigint NOT NULL)",
                "CREATE INDEX applied_write_at ON applied_write (at)",
                // Every change to a member, their fields or beacons is announced (ids only) to the coordinators.
                """
                CREATE FUNCTION beaconmesh_notify_member() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_TABLE_NAME = 'member' THEN
                        PERFORM pg_notify('\(channel)', pg_backend_pid() || ':' || COALESCE(NEW.id, OLD.id));
                    ELSE
                        PERFORM pg_notify('\(channel)', pg_backend_pid() || ':' || COALESCE(NEW.member, OLD.member));
                    END IF;
                    RETURN NULL;
                END $$
                """,
                """
                CREATE TRIGGER member_changed AFTER INSERT OR UPDATE OR DELETE ON member
                    FOR EACH ROW EXECUTE FUNCTION beaconmesh_notify_member()
                """,
                """
                CREATE TRIGGER member_field_changed AFTER INSERT OR UPDATE OR DELETE ON member_field
                    FOR EACH ROW EXECUTE FUNCTION beaconmesh_notify_member()
                """,
                """
                CREATE TRIGGER beacon_changed AFTER INSERT OR UPDATE OR DELETE ON beacon
                    FOR EACH ROW EXECUTE FUNCTION beaconmesh_notify_member()
                """,
            ]
        ),
        (
            2, "store leases",
            [
                // One row per store: the coordinator that decides for it, since when, until when unless renewed
                // (times by the database's clock), and whether it knew of a standby (then it fences, and the lease may
                // be taken once run out). Version 3 is visit history's.
                """
                CREATE TABLE store_lease (
                    store integer PRIMARY KEY, holder text NOT NULL, since timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL, fenced boolean NOT NULL)
                """,
                // Every coordinator listing a store, as of its last claim: the holder's standbys.
                """
                CREATE TABLE lease_candidate (
                    store integer NOT NULL, coordinator text NOT NULL, seen_at timestamptz NOT NULL,
                    PRIMARY KEY (store, coordinator))
                """,
            ]
        ),
        (
            3, "history: member visits with their stops, offers and check-ins; guest counts",
            [
                """
                CREATE TABLE visit_history (
                    member text NOT NULL REFERENCES member(id) ON DELETE CASCADE, store integer NOT NULL,
                    arrived_at bigint NOT NULL, left_at bigint, number bigint NOT NULL,
                    PRIMARY KEY (store, arrived_at, member), UNIQUE (member, store, arrived_at))
                """,
                "CREATE INDEX visit_history_arrived_at ON visit_history (arrived_at)",
                """
                CREATE TABLE visit_stop (
                    member text NOT NULL, store integer NOT NULL, arrived_at bigint NOT NULL, position integer NOT NULL,
                    finished smallint NOT NULL,
                    department integer NOT NULL, name text NOT NULL, entered_at bigint NOT NULL, dwell_ms bigint NOT NULL,
                    PRIMARY KEY (store, arrived_at, member, position),
                    FOREIGN KEY (member, store, arrived_at) REFERENCES visit_history (member, store, arrived_at) ON DELETE CASCADE)
                """,
                """
                CREATE TABLE visit_offer (
                    member text NOT NULL, store integer NOT NULL, arrived_at bigint NOT NULL, position integer NOT NULL,
                    finished smallint NOT NULL,
                    promo text NOT NULL, department integer NOT NULL, at bigint NOT NULL,
                    PRIMARY KEY (store, arrived_at, member, position),
                    FOREIGN KEY (member, store, arrived_at) REFERENCES visit_history (member, store, arrived_at) ON DELETE CASCADE)
                """,
                """
                CREATE TABLE visit_checkin (
                    member text NOT NULL, store integer NOT NULL, arrived_at bigint NOT NULL, position integer NOT NULL,
                    finished smallint NOT NULL,
                    department integer NOT NULL, at bigint NOT NULL,
                    PRIMARY KEY (store, arrived_at, member, position),
                    FOREIGN KEY (member, store, arrived_at) REFERENCES visit_history (member, store, arrived_at) ON DELETE CASCADE)
                """,
                "CREATE INDEX visit_stop_member ON visit_stop (member, store, arrived_at)",
                "CREATE INDEX visit_offer_member ON visit_offer (member, store, arrived_at)",
                "CREATE INDEX visit_checkin_member ON visit_checkin (member, store, arrived_at)",
                """
                CREATE TABLE guest_count (
                    store integer NOT NULL, hour bigint NOT NULL, department integer NOT NULL, visits bigint NOT NULL,
                    dwell_ms bigint NOT NULL, PRIMARY KEY (store, hour, department))
                """,
            ]
        ),
        (
            4, "survey samples and fits",
            [
                // A store's samples in the order training reads them; one second kept twice is one row. The index on
                // beacon serves `forget`. A fit's version row stays when the fit is cleared (its number never goes back).
                """
                CREATE TABLE survey_sample (
                    store integer NOT NULL, beacon text NOT NULL, at bigint NOT NULL, department integer NOT NULL,
                    readings text NOT NULL, PRIMARY KEY (store, beacon, at))
                """,
                "CREATE INDEX survey_sample_beacon ON survey_sample (beacon)",
                """
                CREATE TABLE survey_fit (
                    store integer PRIMARY KEY, fitted_at bigint NOT NULL, accuracy double precision NOT NULL, fit bytea NOT NULL)
                """,
                "CREATE TABLE survey_version (store integer PRIMARY KEY, version bigint NOT NULL)",
                // Roles provisioned before (`provisionRole` grants the tables there were) get the new tables too, so
                // an upgrade needs the owner to open the registry once, not a new role password for every store.
                grantToMemberWriters(["GRANT SELECT, INSERT, UPDATE, DELETE ON survey_sample, survey_fit, survey_version"]),
            ]
        ),
        (
            5, "a beacon given to another member announces both members",
            [
                // An upsert that moves a beacon updates its row: the old owner is announced too, so that every
                // coordinator stops taking the beacon for them.
                """
                CREATE OR REPLACE FUNCTION beaconmesh_notify_member() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_TABLE_NAME = 'member' THEN
                        PERFORM pg_notify('\(channel)', pg_backend_pid() || ':' || COALESCE(NEW.id, OLD.id));
                    ELSE
                        IF TG_OP <> 'DELETE' THEN
                            PERFORM pg_notify('\(channel)', pg_backend_pid() || ':' || NEW.member);
                        END IF;
                        IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.member IS DISTINCT FROM NEW.member) THEN
                            PERFORM pg_notify('\(channel)', pg_backend_pid() || ':' || OLD.member);
                        END IF;
                    END IF;
                    RETURN NULL;
                END $$
                """
            ]
        ),
        (
            6, "member changes are logged, and announced by their place in the log, not by member id",
            [
                // A notification's payload lands in PostgreSQL's queue files (pg_notify/), which no vacuum clears: it
                // names the change's row, and the row (deleted when the member is forgotten) names the member.
                "CREATE TABLE member_change (seq bigserial PRIMARY KEY, member text NOT NULL)",
                """
                CREATE OR REPLACE FUNCTION beaconmesh_notify_member() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    changed text[];
                    changed_member text;
                    logged bigint;
                BEGIN
                    IF TG_TABLE_NAME = 'member' THEN
                        changed := ARRAY[COALESCE(NEW.id, OLD.id)];
                    ELSE
                        IF TG_OP <> 'DELETE' THEN
                            changed := ARRAY[NEW.member];
                        END IF;
                        IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.member IS DISTINCT FROM NEW.member) THEN
                            changed := changed || OLD.member;
                        END IF;
                    END IF;
                    FOREACH changed_member IN ARRAY changed LOOP
                        INSERT INTO member_change (member) VALUES (changed_member) RETURNING seq INTO logged;
                        IF logged % 100 = 0 THEN
                            DELETE FROM member_change WHERE seq <= logged - \(changeLogLength);
                        END IF;
                        PERFORM pg_notify('\(channel)', pg_backend_pid() || ':' || logged);
                    END LOOP;
                    RETURN NULL;
                END $$
                """,
                // Roles provisioned before write the log too.
                grantToMemberWriters([
                    "GRANT SELECT, INSERT, DELETE ON member_change", "GRANT USAGE, SELECT ON SEQUENCE member_change_seq_seq",
                ]),
            ]
        ),
        (
            7, "webhook outbox",
            [
                // What each webhook endpoint is owed, in order; `member` names whose personal data a row carries.
                """
                CREATE TABLE webhook_outbox (
                    seq bigserial PRIMARY KEY, endpoint text NOT NULL, store integer NOT NULL, event_id text NOT NULL,
                    body bytea NOT NULL, member text, created_at bigint NOT NULL)
                """,
                // Read in outbox order, skipping other stores' rows (few: a coordinator delivers for the stores it decides).
                "CREATE INDEX webhook_outbox_endpoint ON webhook_outbox (endpoint, seq)",
                "CREATE INDEX webhook_outbox_member ON webhook_outbox (member) WHERE member IS NOT NULL",
                grantToMemberWriters([
                    "GRANT SELECT, INSERT, DELETE ON webhook_outbox", "GRANT USAGE, SELECT ON SEQUENCE webhook_outbox_seq_seq",
                ]),
            ]
        ),
        (
            8, "survey samples say where their department came from",
            // A walk's mark, a reference or a check-in (`SurveySample.Source`); every sample before was a walk's.
            ["ALTER TABLE survey_sample ADD COLUMN source text NOT NULL DEFAULT 'walk'"]
        ),
        (
            9, "each coordinator's webhook list beside its claims",
            // Its fingerprint and its endpoints' names (a line each), so coordinators of a chain whose lists differ
            // say so (`StoreLeases.exchangeWebhookLists`); empty: a coordinator from before.
            [
                "ALTER TABLE lease_candidate ADD COLUMN webhooks text NOT NULL DEFAULT ''",
                "ALTER TABLE lease_candidate ADD COLUMN webhook_endpoints text NOT NULL DEFAULT ''",
            ]
        ),
        (
            10, "members' Eddystone-EID fobs",
            [
                // The identity key sealed under the secrets key (`MemberFob`); the handle is also among the member's beacons.
                """
                CREATE TABLE member_fob (
                    member text PRIMARY KEY REFERENCES member(id) ON DELETE CASCADE, sealed_key bytea NOT NULL,
                    rotation_exponent integer NOT NULL, counter_offset bigint NOT NULL, handle bigint NOT NULL)
                """,
                grantToMemberWriters(["GRANT SELECT, INSERT, UPDATE, DELETE ON member_fob"]),
            ]
        ),
        (
            11, "survey marks",
            [
                // The mark of each surveyed beacon a coordinator holds: a restart or a take-over goes on sampling it.
                """
                CREATE TABLE survey_mark (
                    store integer NOT NULL, beacon text NOT NULL, department integer, since bigint NOT NULL,
                    PRIMARY KEY (store, beacon))
                """,
                grantToMemberWriters(["GRANT SELECT, INSERT, UPDATE, DELETE ON survey_mark"]),
            ]
        ),
    ]

    /// SQL granting `grants` (each "GRANT … ON …", without "TO") to every role that may add members: the roles
    /// `provisionRole` made before a migration get what it adds, so an upgrade needs the owner to open the registry
    /// once, not a new role password for every store.
    static func grantToMemberWriters(_ grants: [String]) -> String {
        """
        DO $$
        DECLARE grantee text;
        BEGIN
            FOR grantee IN SELECT DISTINCT g.grantee FROM information_schema.role_table_grants g
                WHERE g.table_schema = 'public' AND g.table_name = 'member' AND g.privilege_type = 'INSERT'
                    AND g.grantee <> current_user
            LOOP
        \(grants.map { "        EXECUTE format('\($0) TO %I', grantee);" }.joined(separator: "\n"))
            END LOOP;
        END $$
        """
    }

    /// A database whose schema a newer BeaconMesh made: this program does not know its tables.
    struct NewerSchema: Error { var version: Int }

    /// Brings the schema up to date; returns the versions it applied.
    @discardableResult
    static func migrate(_ statements: PostgresSession.Statements) throws -> [Int] {
        try statements.execute("BEGIN")
        do {
            let done = try migrate(inTransaction: statements)
            try statements.execute("COMMIT")
            return done
        } catch {
            _ = try? statements.execute("ROLLBACK")
            throw error
        }
    }

    private static func migrate(inTransaction statements: PostgresSession.Statements) throws -> [Int] {
        try statements.execute("SELECT pg_advisory_xact_lock(\(lockKey))")
        let exists = try statements.query("SELECT to_regclass('schema_migration') IS NOT NULL").first?.decode(Bool.self) ?? false
        if !exists {
            try statements.execute(
                "CREATE TABLE schema_migration (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
        }
        let applied = Set(try statements.query("SELECT version FROM schema_migration").map { try $0.decode(Int.self) })
        if let newest = applied.max(), newest > migrations.map(\.version).max() ?? 0 { throw NewerSchema(version: newest) }
        var done: [Int] = []
        for migration in migrations where !applied.contains(migration.version) {
            for sql in migration.sql { try statements.execute(PostgresQuery(unsafeSQL: sql)) }
            try statements.execute(
                "INSERT INTO schema_migration (version, name) VALUES (\(migration.version), \(migration.name))")
            done.append(migration.version)
        }
        return done
    }
}
