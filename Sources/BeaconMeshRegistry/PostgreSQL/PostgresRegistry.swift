import BeaconMeshCore
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The registry in a chain's PostgreSQL database, shared by every store's coordinator, the `members` command and the
/// dashboard.
///
/// Why postgres-nio (vapor/postgres-nio 1.33.2, from the package mirror): it is the PostgreSQL client the Swift server
/// community maintains (the SSWG's, behind Vapor and Hummingbird), pure Swift on SwiftNIO — no libpq to link and wrap
/// — with TLS, SCRAM authentication, typed binds (`\(value)` in a query is a parameter, never pasted SQL) and
/// LISTEN/NOTIFY, which is how member changes reach every coordinator within a second. The registry's callers block
/// on their own threads, so it is used through one `PostgresSession` per registry, not a pool.
///
/// Counts are increments (`visits = visits + n`) so that stores counting at once all count; every member change is
/// announced on `PostgresSchema.channel` by triggers, whoever made it.
public final class PostgresRegistry: MemberRegistry {
    let session: PostgresSession
    let settings: PostgresSettings
    let password: String?
    let logger: Logger

    public var location: String { settings.displayURL }

    /// Connects to the database and brings its schema up to date (under an advisory lock). With `connectingLater`,
    /// nothing is asked now: the first call connects and brings the schema up to date (a coordinator starting from
    /// its local cache while the database cannot be reached), and calls fail as the database does until then.
    public init(settings: PostgresSettings, password: String?, logger: Logger, connectingLater: Bool = false) throws(RegistryFailure) {
        self.settings = settings
        self.password = password
        self.logger = logger
        let display = settings.displayURL
        session = try PostgresSession(settings: settings, password: password, logger: logger) { statements in
            do {
                try PostgresSchema.migrate(statements)
            } catch let newer as PostgresSchema.NewerSchema {
                throw RegistryFailure(
                    .newerSchema,
                    "the registry \(display) was upgraded by a newer BeaconMesh (schema version \(newer.version)); run this program's newer version with it"
                )
            }
        }
        guard !connectingLater else { return }
        do {
            try session.run { _ in }
        } catch let failure as RegistryFailure where failure.kind == .newerSchema {
            throw failure
        } catch {
            throw RegistryFailure(.unavailable, "cannot open the registry \(display): \(PostgresRegistry.describe(error))")
        }
    }

    deinit { session.close() }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    // MARK: Members

    @discardableResult
    public func merge(_ records: [MemberRecord]) throws -> ImportSummary {
        try session.transaction { statements in
            var summary = ImportSummary()
            // In slices, each a handful of statements whatever its size (an import of 100,000 members).
            for start in stride(from: 0, to: records.count, by: 5000) {
                let slice = Array(records[start..<min(records.count, start + 5000)])
                let existing = Dictionary(
                    uniqueKeysWithValues: try fetch(ids: slice.map(\.id), statements).map { ($0.id, $0) })
                var changed: [MemberRecord] = []
                var events: [(RegistryEvent.Kind, String)] = []
                for record in slice {
                    var merged = record
                    if let known = existing[record.id] {
                        merged.profile.visits = max(known.profile.visits, record.profile.visits)
                        merged.profile.checkins = max(known.profile.checkins, record.profile.checkins)
                        merged.profile.lastVisitAt = [known.profile.lastVisitAt, record.profile.lastVisitAt].compactMap { $0 }.max()
                        merged.createdAt = known.createdAt ?? record.createdAt
                        if known.profile == merged.profile && Set(known.beacons) == Set(merged.beacons)
                            && known.createdAt == merged.createdAt
                        {
                            summary.unchanged += 1
                            continue
                        }
                        summary.updated += 1
                        events.append((.updated, record.id))
                    } else {
                        summary.added += 1
                        events.append((.added, record.id))
                    }
                    changed.append(merged)
                }
                try store(changed, statements)
                try recordEvents(events, statements)
            }
            return summary
        }
    }

    /// Writes `records` whole (profile, fields, beacons), replacing what is stored under their ids.
    private func store(_ records: [MemberRecord], _ statements: PostgresSession.Statements) throws {
        guard !records.isEmpty else { return }
        let ids = records.map(\.id)
        let drinks = NullableColumn(records.map(\.profile.favoriteDrink), placeholder: "")
        let photos = NullableColumn(records.map(\.profile.photo), placeholder: "")
        let lastVisits = NullableColumn(records.map { $0.profile.lastVisitAt?.milliseconds }, placeholder: 0)
        let created = NullableColumn(records.map { $0.createdAt?.milliseconds }, placeholder: 0)
        try statements.execute(
            """
            INSERT INTO member (id, name, favorite_drink, photo, visits, checkins, last_visit_at, created_at)
            SELECT id, name, CASE WHEN has_drink THEN drink END, CASE WHEN has_photo THEN photo END, visits, checkins,
                CASE WHEN has_last THEN last_visit_at END, CASE WHEN has_created THEN created_at END
            FROM unnest(\(ids)::text[], \(records.map(\.profile.name))::text[],
                \(drinks.values)::text[], \(drinks.present)::bool[], \(photos.values)::text[], \(photos.present)::bool[],
                \(records.map { Int64($0.profile.visits) })::bigint[], \(records.map { Int64($0.profile.checkins) })::bigint[],
                \(lastVisits.values)::bigint[], \(lastVisits.present)::bool[], \(created.values)::bigint[], \(created.present)::bool[])
                AS m(id, name, drink, has_drink, photo, has_photo, visits, checkins, last_visit_at, has_last, created_at, has_created)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, favorite_drink = excluded.favorite_drink,
                photo = excluded.photo, visits = excluded.visits, checkins = excluded.checkins,
                last_visit_at = excluded.last_visit_at, created_at = excluded.created_at
            """)
        try statements.execute("DELETE FROM member_field WHERE member = ANY(\(ids))")
        let fields = records.flatMap { record in record.profile.customFields.map { (record.id, $0.key, $0.value) } }
        if !fields.isEmpty {
            try statements.execute(
                """
                INSERT INTO member_field (member, name, value)
                SELECT * FROM unnest(\(fields.map(\.0))::text[], \(fields.map(\.1))::text[], \(fields.map(\.2))::text[])
                """)
        }
        try statements.execute("DELETE FROM beacon WHERE member = ANY(\(ids))")
        let beacons = records.flatMap { record in record.beacons.map { ($0.description, record.id) } }
        if !beacons.isEmpty {
            try statements.execute(
                """
                INSERT INTO beacon (key, member) SELECT * FROM unnest(\(beacons.map(\.0))::text[], \(beacons.map(\.1))::text[])
                ON CONFLICT (key) DO UPDATE SET member = excluded.member
                """)
        }
    }

    private func recordEvents(_ events: [(RegistryEvent.Kind, String)], _ statements: PostgresSession.Statements) throws {
        guard !events.isEmpty else { return }
        try statements.execute(
            """
            INSERT INTO registry_event (type, member, at)
            SELECT kind, member, \(Self.now()) FROM unnest(\(events.map(\.0.rawValue))::text[], \(events.map(\.1))::text[])
                WITH ORDINALITY AS e(kind, member, n) ORDER BY n
            """)
    }

    @discardableResult
    public func remove(id: String) throws -> Bool {
        try delete(id: id, as: .removed)
    }

    /// Deletes the member's row (their fields, beacons, visits and promo history go with it) and the survey samples of
    /// their beacons. PostgreSQL keeps a deleted row's bytes in its table file until vacuum reclaims the page
    /// (autovacuum does, soon after): no query, dump or replica shows them.
    @discardableResult
    public func forget(id: String) throws -> Bool {
        try delete(id: id, as: .forgotten)
    }

    private func delete(id: String, as kind: RegistryEvent.Kind) throws -> Bool {
        try session.transaction { statements in
            // Survey samples name a beacon, not a member: those of a forgotten member's beacons go first, while the
            // beacons still say whose they are.
            if kind == .forgotten { try deleteSurveySamples(ofMember: id, statements) }
            guard try statements.execute("DELETE FROM member WHERE id = \(id)") > 0 else { return false }
            if kind == .forgotten {
                // The change log forgets her too, and says "anyone may have changed" instead: it names no one.
                try statements.execute("DELETE FROM member_change WHERE member = \(id)")
                try statements.query(
                    PostgresQuery(
                        unsafeSQL: """
                            WITH logged AS (INSERT INTO member_change (member) VALUES ('\(RegistryChange.everyoneLogged)') RETURNING seq)
                            SELECT pg_notify('\(PostgresSchema.channel)', pg_backend_pid() || ':' || seq) FROM logged
                            """))
            }
            try recordEvents([(kind, id)], statements)
            return true
        }
    }

    public func allMembers() throws -> [MemberRecord] {
        try session.run { statements in try fetch(ids: nil, statements) }
    }

    public func members(ids: Set<String>) throws -> [MemberRecord] {
        guard !ids.isEmpty else { return [] }
        return try session.run { statements in try fetch(ids: Array(ids), statements) }
    }

    /// Members by id (all if `nil`), ordered by id: three queries whatever their number.
    private func fetch(ids: [String]?, _ statements: PostgresSession.Statements) throws -> [MemberRecord] {
        let all = ids == nil
        let wanted = ids ?? []
        var fields: [String: [String: String]] = [:]
        for row in try statements.query(
            "SELECT member, name, value FROM member_field WHERE \(all) OR member = ANY(\(wanted))")
        {
            let (member, name, value) = try row.decode((String, String, String).self)
            fields[member, default: [:]][name] = value
        }
        var beacons: [String: [BeaconKey]] = [:]
        for row in try statements.query(
            "SELECT member, key FROM beacon WHERE \(all) OR member = ANY(\(wanted)) ORDER BY member, key")
        {
            let (member, key) = try row.decode((String, String).self)
            if let key = BeaconKey(key) { beacons[member, default: []].append(key) }
        }
        return try statements.query(
            """
            SELECT id, name, favorite_drink, photo, visits, checkins, last_visit_at, created_at FROM member
            WHERE \(all) OR id = ANY(\(wanted)) ORDER BY id
            """
        ).map { row in
            let (id, name, drink, photo, visits, checkins, lastVisitAt, createdAt) = try row.decode(
                (String, String, String?, String?, Int64, Int64, Int64?, Int64?).self)
            let profile = MemberProfile(
                id: id, name: name, favoriteDrink: drink, visits: Int(visits),
                lastVisitAt: lastVisitAt.map(Timestamp.init(milliseconds:)), photo: photo,
                customFields: fields[id] ?? [:], checkins: Int(checkins))
            return MemberRecord(profile: profile, beacons: beacons[id] ?? [], createdAt: createdAt.map(Timestamp.init(milliseconds:)))
        }
    }

    public func contents() throws -> RegistryContents {
        try session.run { statements in
            let members = try fetch(ids: nil, statements)
            var owners: [BeaconKey: String] = [:]
            for member in members {
                for beacon in member.beacons { owners[beacon] = member.id }
            }
            return RegistryContents(
                profiles: Dictionary(uniqueKeysWithValues: members.map { ($0.id, $0.profile) }), beaconOwners: owners,
                promoFires: try fetchPromoFires(statements))
        }
    }

    // MARK: Loyalty

    public func apply(_ changes: RegistryChanges, batch: String?, stores: Set<UInt16>?) throws {
        guard !changes.isEmpty else { return }
        try session.transaction { statements in
            if let batch {
                let fresh = try statements.execute(
                    "INSERT INTO applied_write (id, at) VALUES (\(batch), \(Self.now())) ON CONFLICT (id) DO NOTHING")
                // Applied already: the commit went through and only its answer was lost.
                guard fresh > 0 else { return }
            }
            let scope = stores.map { $0.map { Int32($0) } }
            // Without leases (the `members` command, a coordinator's own tests) no holder is anybody else.
            let holder = changes.decidedBy ?? ""
            let fenceVisits = changes.decidedBy != nil
            let saved = changes.visits.values.compactMap { $0 }
            if !saved.isEmpty {
                let left = NullableColumn(saved.map { $0.leftAt?.milliseconds }, placeholder: 0)
                try statements.execute(
                    """
                    INSERT INTO visit (member, store, arrived_at, department, in_department_since, last_seen, left_at, proximity)
                    SELECT member, store, arrived_at, department, in_department_since, last_seen,
                        CASE WHEN has_left THEN left_at END, proximity
                    FROM unnest(\(saved.map(\.member))::text[], \(saved.map { Int32($0.store) })::integer[],
                        \(saved.map(\.arrivedAt.milliseconds))::bigint[], \(saved.map { Int32($0.department) })::integer[],
                        \(saved.map(\.inDepartmentSince.milliseconds))::bigint[], \(saved.map(\.lastSeen.milliseconds))::bigint[],
                        \(left.values)::bigint[], \(left.present)::bool[], \(saved.map(\.proximity.rawValue))::text[])
                        AS v(member, store, arrived_at, department, in_department_since, last_seen, left_at, has_left, proximity)
                    WHERE EXISTS (SELECT 1 FROM member WHERE id = v.member)
                        AND (NOT \(fenceVisits) OR NOT EXISTS (SELECT 1 FROM store_lease l WHERE l.store = v.store AND l.holder <> \(holder)))
                    ON CONFLICT (member, store) DO UPDATE SET arrived_at = excluded.arrived_at,
                        department = excluded.department, in_department_since = excluded.in_department_since,
                        last_seen = excluded.last_seen, left_at = excluded.left_at, proximity = excluded.proximity
                    """)
            }
            let ended = changes.visits.filter { $0.value == nil }.map(\.key)
            if !ended.isEmpty {
                try statements.execute(
                    """
                    DELETE FROM visit v WHERE member = ANY(\(ended)) AND (\(scope == nil) OR store = ANY(\(scope ?? [])))
                        AND (NOT \(fenceVisits) OR NOT EXISTS (SELECT 1 FROM store_lease l WHERE l.store = v.store AND l.holder <> \(holder)))
                    """)
            }
            let counts = changes.counts.sorted { $0.key < $1.key }
            if !counts.isEmpty {
                try statements.execute(
                    """
                    UPDATE member m SET visits = m.visits + c.n, last_visit_at = GREATEST(COALESCE(m.last_visit_at, 0), c.at)
                    FROM unnest(\(counts.map(\.key))::text[], \(counts.map { Int64($0.value.visits) })::bigint[],
                        \(counts.map(\.value.at.milliseconds))::bigint[]) AS c(id, n, at)
                    WHERE m.id = c.id
                    """)
            }
            let checkins = changes.checkins.sorted { $0.key < $1.key }
            if !checkins.isEmpty {
                try statements.execute(
                    """
                    UPDATE member m SET checkins = m.checkins + c.n
                    FROM unnest(\(checkins.map(\.key))::text[], \(checkins.map { Int64($0.value) })::bigint[]) AS c(id, n)
                    WHERE m.id = c.id
                    """)
            }
            if !changes.checkinRequests.isEmpty {
                try statements.execute(
                    """
                    INSERT INTO checkin_request (id, at)
                    SELECT * FROM unnest(\(Array(changes.checkinRequests.keys))::text[],
                        \(changes.checkinRequests.values.map(\.milliseconds))::bigint[])
                    ON CONFLICT (id) DO NOTHING
                    """)
            }
            if let before = changes.forgetCheckinRequestsBefore {
                try statements.execute("DELETE FROM checkin_request WHERE at < \(before.milliseconds)")
                try statements.execute("DELETE FROM applied_write WHERE at < \(before.milliseconds)")
            }
            if !changes.publishedRegistryEvents.isEmpty {
                try statements.execute("DELETE FROM registry_event WHERE seq = ANY(\(Array(changes.publishedRegistryEvents)))")
            }
            if let before = changes.forgetHistoryBefore {
                try statements.execute("DELETE FROM visit_history WHERE arrived_at < \(before.milliseconds)")
            }
            try keep(Array(changes.history.values), statements)
            try insertSurveySamples(changes.surveySamples, statements)
            let guests = changes.guestCounts.sorted {
                ($0.key.store, $0.key.hour, $0.key.department) < ($1.key.store, $1.key.hour, $1.key.department)
            }
            if !guests.isEmpty {
                try statements.execute(
                    """
                    INSERT INTO guest_count (store, hour, department, visits, dwell_ms)
                    SELECT * FROM unnest(\(guests.map { Int32($0.key.store) })::integer[], \(guests.map(\.key.hour.milliseconds))::bigint[],
                        \(guests.map { Int32($0.key.department) })::integer[], \(guests.map { Int64($0.value.visits) })::bigint[],
                        \(guests.map(\.value.dwell.wholeMilliseconds))::bigint[])
                    ON CONFLICT (store, hour, department) DO UPDATE SET visits = guest_count.visits + excluded.visits,
                        dwell_ms = guest_count.dwell_ms + excluded.dwell_ms
                    """)
            }
            let fires = Array(changes.promoFires)
            if !fires.isEmpty {
                try statements.execute(
                    """
                    INSERT INTO promo_fire (member, promo, store, fired_at)
                    SELECT f.* FROM unnest(\(fires.map(\.key.member))::text[], \(fires.map(\.key.promo))::text[],
                        \(fires.map { Int32($0.key.store) })::integer[], \(fires.map(\.value.milliseconds))::bigint[])
                        AS f(member, promo, store, fired_at)
                    WHERE EXISTS (SELECT 1 FROM member WHERE id = f.member)
                    ON CONFLICT (member, promo) DO UPDATE SET store = excluded.store, fired_at = excluded.fired_at
                    """)
            }
        }
    }

    public func loadVisits(stores: Set<UInt16>?) throws -> [PresenceEngine.Visit] {
        let scope = (stores ?? []).map { Int32($0) }
        return try session.run { statements in
            try statements.query(
                """
                SELECT member, store, arrived_at, department, in_department_since, last_seen, left_at, proximity FROM visit
                WHERE \(stores == nil) OR store = ANY(\(scope))
                """
            ).map { row in
                let (member, store, arrivedAt, department, since, lastSeen, leftAt, proximity) = try row.decode(
                    (String, Int32, Int64, Int32, Int64, Int64, Int64?, String).self)
                return PresenceEngine.Visit(
                    member: member, store: UInt16(store), arrivedAt: Timestamp(milliseconds: arrivedAt),
                    department: UInt16(department), inDepartmentSince: Timestamp(milliseconds: since),
                    lastSeen: Timestamp(milliseconds: lastSeen), leftAt: leftAt.map(Timestamp.init(milliseconds:)),
                    proximity: Proximity(rawValue: proximity) ?? .unknown)
            }
        }
    }

    // MARK: History

    /// Keeps `records` in the history, replacing what was kept under their keys (stops, offers and check-ins too);
    /// nothing for members that no longer exist. A handful of statements whatever their number.
    private func keep(_ records: [VisitRecord], _ statements: PostgresSession.Statements) throws {
        guard !records.isEmpty else { return }
        let members = records.map(\.member)
        let stores = records.map { Int32($0.store) }
        let arrivals = records.map(\.arrivedAt.milliseconds)
        try statements.execute(
            """
            DELETE FROM visit_history h USING unnest(\(members)::text[], \(stores)::integer[], \(arrivals)::bigint[]) AS k(member, store, arrived_at)
            WHERE h.member = k.member AND h.store = k.store AND h.arrived_at = k.arrived_at
            """)
        let left = NullableColumn(records.map { $0.leftAt?.milliseconds }, placeholder: 0)
        try statements.execute(
            """
            INSERT INTO visit_history (member, store, arrived_at, left_at, number)
            SELECT v.member, v.store, v.arrived_at, CASE WHEN v.has_left THEN v.left_at END, v.number
            FROM unnest(\(members)::text[], \(stores)::integer[], \(arrivals)::bigint[], \(left.values)::bigint[],
                \(left.present)::bool[], \(records.map { Int64($0.number) })::bigint[]) AS v(member, store, arrived_at, left_at, has_left, number)
            WHERE EXISTS (SELECT 1 FROM member WHERE id = v.member)
            """)
        func keyed<Item>(_ items: KeyPath<VisitRecord, [Item]>) -> [(record: VisitRecord, position: Int32, item: Item)] {
            records.flatMap { record in record[keyPath: items].enumerated().map { (record, Int32($0.offset), $0.element) } }
        }
        let stops = keyed(\.stops)
        if !stops.isEmpty {
            try statements.execute(
                """
                INSERT INTO visit_stop (member, store, arrived_at, position, finished, department, name, entered_at, dwell_ms)
                SELECT s.* FROM unnest(\(stops.map(\.record.member))::text[], \(stops.map { Int32($0.record.store) })::integer[],
                    \(stops.map(\.record.arrivedAt.milliseconds))::bigint[], \(stops.map(\.position))::integer[],
                    \(stops.map { Int16($0.record.leftAt == nil ? 0 : 1) })::smallint[],
                    \(stops.map { Int32($0.item.department) })::integer[], \(stops.map(\.item.name))::text[],
                    \(stops.map(\.item.enteredAt.milliseconds))::bigint[], \(stops.map(\.item.dwell.wholeMilliseconds))::bigint[])
                    AS s(member, store, arrived_at, position, finished, department, name, entered_at, dwell_ms)
                WHERE EXISTS (SELECT 1 FROM visit_history h WHERE h.member = s.member AND h.store = s.store AND h.arrived_at = s.arrived_at)
                """)
        }
        let offers = keyed(\.offers)
        if !offers.isEmpty {
            try statements.execute(
                """
                INSERT INTO visit_offer (member, store, arrived_at, position, finished, promo, department, at)
                SELECT o.* FROM unnest(\(offers.map(\.record.member))::text[], \(offers.map { Int32($0.record.store) })::integer[],
                    \(offers.map(\.record.arrivedAt.milliseconds))::bigint[], \(offers.map(\.position))::integer[],
                    \(offers.map { Int16($0.record.leftAt == nil ? 0 : 1) })::smallint[],
                    \(offers.map(\.item.promo))::text[], \(offers.map { Int32($0.item.department) })::integer[],
                    \(offers.map(\.item.at.milliseconds))::bigint[])
                    AS o(member, store, arrived_at, position, finished, promo, department, at)
                WHERE EXISTS (SELECT 1 FROM visit_history h WHERE h.member = o.member AND h.store = o.store AND h.arrived_at = o.arrived_at)
                """)
        }
        let checkins = keyed(\.checkins)
        if !checkins.isEmpty {
            try statements.execute(
                """
                INSERT INTO visit_checkin (member, store, arrived_at, position, finished, department, at)
                SELECT c.* FROM unnest(\(checkins.map(\.record.member))::text[], \(checkins.map { Int32($0.record.store) })::integer[],
                    \(checkins.map(\.record.arrivedAt.milliseconds))::bigint[], \(checkins.map(\.position))::integer[],
                    \(checkins.map { Int16($0.record.leftAt == nil ? 0 : 1) })::smallint[],
                    \(checkins.map { Int32($0.item.department) })::integer[], \(checkins.map(\.item.at.milliseconds))::bigint[])
                    AS c(member, store, arrived_at, position, finished, department, at)
                WHERE EXISTS (SELECT 1 FROM visit_history h WHERE h.member = c.member AND h.store = c.store AND h.arrived_at = c.arrived_at)
                """)
        }
    }

    public func openHistory(stores: Set<UInt16>?) throws -> [VisitRecord] {
        let scope = (stores ?? []).map { Int32($0) }
        return try session.run { statements in
            try fetchHistory(
                where: "h.left_at IS NULL AND (\(stores == nil) OR h.store = ANY(\(scope)))", statements)
        }
    }

    public func history(store: UInt16, from: Timestamp, to: Timestamp) throws -> [VisitRecord] {
        try session.run { statements in
            try fetchHistory(
                where:
                    "h.store = \(Int32(store)) AND h.arrived_at >= \(from.milliseconds) AND h.arrived_at < \(to.milliseconds)",
                statements)
        }
    }

    /// The history's visits that `condition` (on `visit_history h`) picks, oldest first: four queries.
    private func fetchHistory(where condition: PostgresQuery, _ statements: PostgresSession.Statements) throws -> [VisitRecord] {
        func query(_ head: String, _ tail: String) -> PostgresQuery {
            PostgresQuery(unsafeSQL: head + condition.sql + tail, binds: condition.binds)
        }
        var records: [VisitRecord.Key: VisitRecord] = [:]
        var order: [VisitRecord.Key] = []
        for row in try statements.query(
            query(
                "SELECT h.member, h.store, h.arrived_at, h.left_at, h.number FROM visit_history h WHERE ",
                " ORDER BY h.arrived_at, h.member"))
        {
            let (member, store, arrivedAt, leftAt, number) = try row.decode((String, Int32, Int64, Int64?, Int64).self)
            let record = VisitRecord(
                member: member, store: UInt16(store), arrivedAt: Timestamp(milliseconds: arrivedAt),
                leftAt: leftAt.map(Timestamp.init(milliseconds:)), number: Int(number))
            records[record.key] = record
            order.append(record.key)
        }
        guard !records.isEmpty else { return [] }
        let join = " x JOIN visit_history h ON h.member = x.member AND h.store = x.store AND h.arrived_at = x.arrived_at WHERE "
        func key(_ member: String, _ store: Int32, _ arrivedAt: Int64) -> VisitRecord.Key {
            VisitRecord.Key(member: member, store: UInt16(store), arrivedAt: Timestamp(milliseconds: arrivedAt))
        }
        for row in try statements.query(
            query(
                "SELECT x.member, x.store, x.arrived_at, x.department, x.name, x.entered_at, x.dwell_ms FROM visit_stop" + join,
                " ORDER BY x.position"))
        {
            let (member, store, arrivedAt, department, name, enteredAt, dwell) = try row.decode(
                (String, Int32, Int64, Int32, String, Int64, Int64).self)
            records[key(member, store, arrivedAt)]?.stops.append(
                .init(
                    department: UInt16(department), name: name, enteredAt: Timestamp(milliseconds: enteredAt),
                    dwell: .milliseconds(dwell)))
        }
        for row in try statements.query(
            query("SELECT x.member, x.store, x.arrived_at, x.promo, x.department, x.at FROM visit_offer" + join, " ORDER BY x.position"))
        {
            let (member, store, arrivedAt, promo, department, at) = try row.decode((String, Int32, Int64, String, Int32, Int64).self)
            records[key(member, store, arrivedAt)]?.offers.append(
                .init(promo: promo, department: UInt16(department), at: Timestamp(milliseconds: at)))
        }
        for row in try statements.query(
            query("SELECT x.member, x.store, x.arrived_at, x.department, x.at FROM visit_checkin" + join, " ORDER BY x.position"))
        {
            let (member, store, arrivedAt, department, at) = try row.decode((String, Int32, Int64, Int32, Int64).self)
            records[key(member, store, arrivedAt)]?.checkins.append(.init(department: UInt16(department), at: Timestamp(milliseconds: at)))
        }
        return order.compactMap { records[$0] }
    }

    /// Without JIT compilation and without parallel workers: the planner's estimates of a store's period (a store's
    /// year beside a chain's month) run high enough to turn both on, and compiling took longer than the queries (a
    /// 7-day report 1 s instead of 0.2), and starting workers longer than the few thousand rows they share (the
    /// departments' query 66 ms alone against 100–145 ms with two workers).
    public func analytics(store: UInt16, from: Timestamp, to: Timestamp) throws -> StoreAnalytics {
        try session.transaction { statements in
            try statements.execute("SET LOCAL jit = off")
            try statements.execute("SET LOCAL max_parallel_workers_per_gather = 0")
            return try AnalyticsQuery.run(store: store, from: from, to: to, dialect: .postgres) { sql in
                var binds = PostgresBindings()
                binds.append(Int32(store))
                binds.append(from.milliseconds)
                binds.append(to.milliseconds)
                return try Self.analyticsRows(statements, PostgresQuery(unsafeSQL: AnalyticsQuery.postgresText(sql), binds: binds))
            }
        }
    }

    /// Without JIT compilation, as `analytics`; with parallel workers, which share the chain's millions of rows well.
    public func storeSummaries(from: Timestamp, to: Timestamp) throws -> [StoreSummary] {
        try session.transaction { statements in
            try statements.execute("SET LOCAL jit = off")
            return try AnalyticsQuery.summaries(from: from, to: to) { sql in
                var binds = PostgresBindings()
                binds.append(from.milliseconds)
                binds.append(to.milliseconds)
                return try Self.analyticsRows(
                    statements, PostgresQuery(unsafeSQL: AnalyticsQuery.postgresText(sql, withStore: false), binds: binds))
            }
        }
    }

    /// The rows of one analytics query, as cells.
    private static func analyticsRows(_ statements: PostgresSession.Statements, _ query: PostgresQuery) throws -> [[AnalyticsQuery.Value]] {
        try statements.query(query).map { row in
            try row.map { cell -> AnalyticsQuery.Value in
                guard cell.bytes != nil else { return .null }
                switch cell.dataType {
                case .text, .varchar, .name: return .text(try cell.decode(String.self))
                default: return .integer(try cell.decode(Int64.self))
                }
            }
        }
    }

    /// The bytes the history's tables and their indexes take (for the benchmark's size per visit).
    public func historyTableBytes() throws -> Int {
        try session.run { statements in
            let total = try statements.query(
                """
                SELECT CAST(SUM(pg_total_relation_size(c)) AS BIGINT) FROM unnest(ARRAY['visit_history', 'visit_stop',
                    'visit_offer', 'visit_checkin', 'guest_count']::regclass[]) AS c
                """
            ).first?.decode(Int64.self)
            return Int(total ?? 0)
        }
    }

    public func historyStores() throws -> [UInt16] {
        try session.run { statements in
            try statements.query("SELECT store FROM visit_history UNION SELECT store FROM guest_count ORDER BY store").compactMap {
                UInt16(exactly: try $0.decode(Int32.self))
            }
        }
    }

    // MARK: Promo history, check-ins, registry events

    public func promoFires() throws -> [String: [String: Timestamp]] {
        try session.run { statements in try fetchPromoFires(statements) }
    }

    private func fetchPromoFires(_ statements: PostgresSession.Statements) throws -> [String: [String: Timestamp]] {
        var fires: [String: [String: Timestamp]] = [:]
        for row in try statements.query("SELECT member, promo, fired_at FROM promo_fire") {
            let (member, promo, at) = try row.decode((String, String, Int64).self)
            fires[member, default: [:]][promo] = Timestamp(milliseconds: at)
        }
        return fires
    }

    public func checkinRequests(since time: Timestamp) throws -> Set<String> {
        try session.run { statements in
            Set(try statements.query("SELECT id FROM checkin_request WHERE at >= \(time.milliseconds)").map { try $0.decode(String.self) })
        }
    }

    public func claimRegistryEvents(for coordinator: String) throws -> [PendingRegistryEvent] {
        try session.transaction { statements in
            try statements.execute("UPDATE registry_event SET claimed_by = \(coordinator) WHERE claimed_by IS NULL")
            return try statements.query(
                "SELECT seq, type, member, at FROM registry_event WHERE claimed_by = \(coordinator) ORDER BY seq"
            ).compactMap { row in
                let (seq, type, member, at) = try row.decode((Int64, String, String, Int64).self)
                guard let kind = RegistryEvent.Kind(rawValue: type) else { return nil }
                return PendingRegistryEvent(seq: seq, kind: kind, member: member, at: Timestamp(milliseconds: at))
            }
        }
    }

    // MARK: Changes, errors

    /// Member changes announced by the database (LISTEN), on a connection of the feed's own.
    public func changeFeed() throws -> any RegistryChangeFeed {
        try PostgresChangeFeed(
            session: try PostgresSession(settings: settings, password: password, logger: logger),
            ownPID: { [session] in session.backendPID.load(ordering: .relaxed) }, logger: logger)
    }

    public func describe(_ error: any Error) -> String { Self.describe(error) }

    /// A PostgreSQL or connection failure in an IT person's words.
    static func describe(_ error: any Error) -> String {
        if let failure = error as? RegistryFailure { return failure.description }
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                let state = info[.sqlState] ?? "?"
                let message = info[.message] ?? "refused"
                switch state {
                case "28P01", "28000":
                    return
                        "the server refused the login (\(message)): check the user, databasePasswordFile or BEACONMESH_DB_PASSWORD, and pg_hba.conf"
                case "3D000":
                    return "the database does not exist (\(message))"
                case "42501":
                    return "the database role lacks a permission (\(message)): run `beacon-coordinator provision` or grant it"
                case "57P01", "57P02", "57P03":
                    return "the server is shutting down or starting up (\(message))"
                default:
                    return "the server refused: \(message) (SQLSTATE \(state))"
                }
            }
            switch error.code {
            case .connectionError:
                return "cannot connect: \(error.underlying.map { "\($0)" } ?? "connection refused")"
            case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
                return "the connection was lost (the server stopped, or the network dropped it, or it did not answer in 10 s)"
            case .sslUnsupported:
                return "the server does not offer TLS, but sslmode asks for it"
            case .failedToAddSSLHandler:
                return "TLS could not be set up: \(error.underlying.map { "\($0)" } ?? "")"
            case .authMechanismRequiresPassword:
                return "the server asks for a password: give databasePasswordFile or BEACONMESH_DB_PASSWORD"
            default:
                return "PostgreSQL client error \(error.code)\(error.underlying.map { ": \($0)" } ?? "")"
            }
        }
        if let error = error as? NIOConnectionError {
            return "cannot connect: \(error.connectionErrors.first.map { "\($0.error)" } ?? "\(error)")"
        }
        return "\(error)"
    }
}
