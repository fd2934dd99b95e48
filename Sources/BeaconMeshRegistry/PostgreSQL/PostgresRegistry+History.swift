import BeaconMeshCore
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Visit history and the analytics read from it.
extension PostgresRegistry {
    /// Keeps `records` in the history, replacing what was kept under their keys (stops, offers and check-ins too);
    /// nothing for members that no longer exist. A handful of statements whatever their number.
    func keep(_ records: [VisitRecord], _ statements: PostgresSession.Statements) throws {
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
}
