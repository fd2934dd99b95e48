import BeaconMeshCore
import Foundation

/// The contract's analytics object for a store and a period, computed by the database: a handful of aggregate
/// queries (counts, nearest-rank percentiles through window functions, sums), never every visit loaded into memory.
///
/// The history tables have the same names and columns in SQLite and PostgreSQL, so both run one SQL text (but for
/// the dwell percentiles, whose faster form differs by planner: `Dialect`): the
/// parameters are written `:store`, `:from` and `:to` (SQLite's named parameters; PostgreSQL's `$1`–`$3` are put in
/// by `postgresText`). Only finished member visits count (`left_at` set); a visit belongs to the period it started
/// in; guests come from their hourly counts (the hours that begin within an hour before `from` up to `to`).
/// Percentiles are nearest-rank: the median is the ⌈n/2⌉-th duration, p90 the ⌈9n/10⌉-th. A visit's rows are grouped
/// by its arrival before its member: a number compares faster than a member id, which is then rarely compared.
enum AnalyticsQuery {
    /// A cell of a result row.
    enum Value: Equatable {
        case integer(Int64)
        case text(String)
        case null

        var integer: Int64 {
            if case .integer(let value) = self { return value }
            return 0
        }

        var text: String {
            switch self {
            case .text(let value): return value
            case .integer(let value): return "\(value)"
            case .null: return ""
            }
        }
    }

    /// The database the texts are for: the same but for two queries, where each planner has its faster form.
    enum Dialect {
        case sqlite, postgres
    }

    /// Runs the queries through `rows` (the backend's: SQL text in, rows of cells out) and assembles the object.
    static func run(
        store: UInt16, from: Timestamp, to: Timestamp, dialect: Dialect, rows: (String) throws -> [[Value]]
    ) throws -> StoreAnalytics {
        var analytics = StoreAnalytics(store: store, from: from, to: to)
        if let row = try rows(visitCounts).first {
            analytics.visits.members = Int(row[0].integer)
            analytics.visits.newMembers = Int(row[1].integer)
            analytics.visits.repeatMembers = analytics.visits.members - analytics.visits.newMembers
        }
        analytics.visits.guests = Int(try rows(guestTotal).first?[0].integer ?? 0)
        if let row = try rows(dialect == .sqlite ? visitDwellByOffset : visitDwell).first {
            analytics.dwell = .init(median: seconds(row[0]), p90: seconds(row[1]))
        }
        var hours: [Int64: (members: Int, guests: Int)] = [:]
        for row in try rows(memberHours) { hours[row[0].integer, default: (0, 0)].members += Int(row[1].integer) }
        for row in try rows(guestHours) { hours[row[0].integer, default: (0, 0)].guests += Int(row[1].integer) }
        analytics.hourly = hours.sorted { $0.key < $1.key }.map {
            .init(hour: Timestamp(milliseconds: $0.key), members: $0.value.members, guests: $0.value.guests)
        }
        analytics.departments = try rows(dialect == .sqlite ? departmentsRankedOnce : departments).map { row in
            .init(
                department: UInt16(clamping: row[0].integer), name: row[1].text, visits: Int(row[2].integer),
                dwell: .init(median: seconds(row[3]), p90: seconds(row[4]), total: seconds(row[5])))
        }
        analytics.flows = try rows(flows).map { row in
            .init(from: UInt16(clamping: row[0].integer), to: UInt16(clamping: row[1].integer), count: Int(row[2].integer))
        }
        if let row = try rows(checkins).first {
            analytics.checkins = .init(count: Int(row[0].integer), visitsWithCheckin: Int(row[1].integer))
        }
        analytics.promos = try rows(promos).map { row in
            .init(
                id: row[0].text, department: UInt16(clamping: row[1].integer), offers: Int(row[2].integer),
                visitsWithCheckinAfter: Int(row[3].integer))
        }
        return analytics
    }

    /// Every store's summary for `[from, to)` (stores with history in the period, in order), from three grouped
    /// queries over the whole chain (`rows` as for `run`, with `:from` and `:to` only).
    static func summaries(from: Timestamp, to: Timestamp, rows: (String) throws -> [[Value]]) throws -> [StoreSummary] {
        var summaries: [UInt16: StoreSummary] = [:]
        func store(_ value: Value) -> UInt16 { UInt16(clamping: value.integer) }
        for row in try rows(storeVisits) {
            let members = Int(row[2].integer)
            let newMembers = Int(row[3].integer)
            summaries[store(row[0])] = StoreSummary(
                store: store(row[0]), memberVisits: Int(row[1].integer),
                visits: .init(members: members, newMembers: newMembers, repeatMembers: members - newMembers),
                averageVisit: seconds(row[4]))
        }
        for row in try rows(storeGuests) {
            summaries[store(row[0]), default: StoreSummary(store: store(row[0]))].visits.guests = Int(row[1].integer)
        }
        for row in try rows(storeCheckins) {
            summaries[store(row[0]), default: StoreSummary(store: store(row[0]))].checkins = Int(row[1].integer)
        }
        return summaries.values.sorted { $0.store < $1.store }
    }

    /// Milliseconds to whole seconds, rounded.
    private static func seconds(_ value: Value) -> Int { Int((value.integer + 500) / 1000) }

    /// `sql` with PostgreSQL's positional parameters: `:store`, `:from`, `:to` are `$1`–`$3`, or, in the summaries
    /// (`withStore` false), `:from` and `:to` are `$1` and `$2`; and a member id marked `/*binary*/` compared byte by
    /// byte (`COLLATE "C"`), as SQLite compares text anyway (to SQLite the mark is a comment): counting distinct
    /// members sorts them, and the database's locale collation made that half the chain's month (6.2 s against 4.1 s).
    static func postgresText(_ sql: String, withStore: Bool = true) -> String {
        let first = withStore ? 2 : 1
        return sql.replacingOccurrences(of: ":store", with: "$1").replacingOccurrences(of: ":from", with: "$\(first)")
            .replacingOccurrences(of: ":to", with: "$\(first + 1)").replacingOccurrences(of: "/*binary*/", with: #"COLLATE "C""#)
    }

    /// The finished member visits of the period.
    private static let periodVisits = """
        h.store = :store AND h.arrived_at >= :from AND h.arrived_at < :to AND h.left_at IS NOT NULL
        """
    /// The stops, offers or check-ins (`x`) of the period's finished visits: read alone, in the order of their
    /// primary key (store, arrival), without a look-up of each visit.
    private static let periodRows = """
        x.store = :store AND x.arrived_at >= :from AND x.arrived_at < :to AND x.finished = 1
        """

    /// Per store: finished member visits, members, new members and the average visit (milliseconds). The period is
    /// read in one pass over the table (`+` keeps the arrival index out of it): looking each of a month's millions of
    /// visits up through that index took SQLite 15 s against 5 s (PostgreSQL 3.4 s against 3.1 s).
    static let storeVisits = """
        SELECT h.store, COUNT(*), COUNT(DISTINCT h.member /*binary*/), COUNT(DISTINCT CASE WHEN h.number = 1 THEN h.member END /*binary*/),
            CAST(AVG(h.left_at - h.arrived_at) AS BIGINT)
        FROM visit_history h WHERE +h.arrived_at >= :from AND +h.arrived_at < :to AND h.left_at IS NOT NULL
        GROUP BY h.store
        """

    /// Per store: guest visits of the hours that begin within an hour before `from` up to `to`.
    static let storeGuests = """
        SELECT store, CAST(SUM(visits) AS BIGINT) FROM guest_count WHERE hour > :from - 3600000 AND hour < :to GROUP BY store
        """

    /// Per store: check-ins of the period's finished visits.
    static let storeCheckins = """
        SELECT x.store, COUNT(*) FROM visit_checkin x WHERE x.arrived_at >= :from AND x.arrived_at < :to AND x.finished = 1
        GROUP BY x.store
        """

    static let visitCounts = """
        SELECT COUNT(DISTINCT h.member /*binary*/), COUNT(DISTINCT CASE WHEN h.number = 1 THEN h.member END /*binary*/)
        FROM visit_history h WHERE \(periodVisits)
        """

    static let guestTotal = """
        SELECT CAST(COALESCE(SUM(visits), 0) AS BIGINT) FROM guest_count
        WHERE store = :store AND hour > :from - 3600000 AND hour < :to
        """

    static let visitDwell = """
        SELECT MAX(CASE WHEN r = (n + 1) / 2 THEN d END), MAX(CASE WHEN r = (9 * n + 9) / 10 THEN d END)
        FROM (SELECT h.left_at - h.arrived_at AS d, ROW_NUMBER() OVER (ORDER BY h.left_at - h.arrived_at) AS r,
                COUNT(*) OVER () AS n
            FROM visit_history h WHERE \(periodVisits)) t
        """

    /// SQLite's median and p90 visit: the visit at each rank read with `LIMIT 1 OFFSET` (the period counted apart),
    /// a sort without the window functions' bookkeeping (15 against 24 ms for a week of 7,000 visits; on PostgreSQL
    /// 30 against 10 ms, so it keeps `visitDwell`). An empty period gives two nulls (the offset is kept at 0).
    static let visitDwellByOffset = """
        SELECT (SELECT h.left_at - h.arrived_at FROM visit_history h WHERE \(periodVisits)
                ORDER BY h.left_at - h.arrived_at LIMIT 1
                OFFSET (SELECT CASE WHEN COUNT(*) = 0 THEN 0 ELSE (COUNT(*) + 1) / 2 - 1 END FROM visit_history h WHERE \(periodVisits))),
            (SELECT h.left_at - h.arrived_at FROM visit_history h WHERE \(periodVisits)
                ORDER BY h.left_at - h.arrived_at LIMIT 1
                OFFSET (SELECT CASE WHEN COUNT(*) = 0 THEN 0 ELSE (9 * COUNT(*) + 9) / 10 - 1 END FROM visit_history h WHERE \(periodVisits)))
        """

    static let memberHours = """
        SELECT h.arrived_at - h.arrived_at % 3600000 AS hour, COUNT(*) FROM visit_history h WHERE \(periodVisits)
        GROUP BY h.arrived_at - h.arrived_at % 3600000
        """

    static let guestHours = """
        SELECT hour, CAST(SUM(visits) AS BIGINT) FROM guest_count WHERE store = :store AND hour > :from - 3600000 AND hour < :to
        GROUP BY hour
        """

    static let departments = """
        SELECT department, MAX(name), COUNT(*), MAX(CASE WHEN r = (n + 1) / 2 THEN d END),
            MAX(CASE WHEN r = (9 * n + 9) / 10 THEN d END), CAST(SUM(d) AS BIGINT)
        FROM (SELECT department, name, d, ROW_NUMBER() OVER (PARTITION BY department ORDER BY d) AS r,
                COUNT(*) OVER (PARTITION BY department) AS n
            FROM (SELECT x.department, MAX(x.name) AS name, CAST(SUM(x.dwell_ms) AS BIGINT) AS d
                FROM visit_stop x WHERE \(periodRows)
                GROUP BY x.arrived_at, x.member, x.department) per_visit) ranked
        GROUP BY department ORDER BY department
        """

    /// SQLite's departments: the visits' dwells are numbered once, in department and dwell order; a department's
    /// ranks start at its lowest number, so each percentile is one look-up; the names come from a grouped scan of
    /// their own, not carried through the sorts (100 against 125 ms for a week; on PostgreSQL, whose window functions
    /// are quick, a form like it took 620 against 73 ms, so it keeps `departments`).
    static let departmentsRankedOnce = """
        WITH ranked AS (
            SELECT department, d, ROW_NUMBER() OVER (ORDER BY department, d) AS r
            FROM (SELECT x.department, CAST(SUM(x.dwell_ms) AS BIGINT) AS d
                FROM visit_stop x WHERE \(periodRows)
                GROUP BY x.arrived_at, x.department, x.member) per_visit)
        SELECT per_department.department, names.name, n, (SELECT d FROM ranked WHERE r = lo + (n + 1) / 2 - 1),
            (SELECT d FROM ranked WHERE r = lo + (9 * n + 9) / 10 - 1), total
        FROM (SELECT department, COUNT(*) AS n, MIN(r) AS lo, CAST(SUM(d) AS BIGINT) AS total FROM ranked GROUP BY department) per_department
        JOIN (SELECT x.department, MAX(x.name) AS name FROM visit_stop x WHERE \(periodRows) GROUP BY x.department) names
            ON names.department = per_department.department
        ORDER BY per_department.department
        """

    static let flows = """
        SELECT x.department, y.department, COUNT(*)
        FROM visit_stop x JOIN visit_stop y ON y.store = x.store AND y.arrived_at = x.arrived_at AND y.member = x.member
                AND y.position = x.position + 1
        WHERE \(periodRows) AND x.department <> y.department
            -- the same bounds on the next stop, which PostgreSQL's planner does not carry over from x
            AND y.store = :store AND y.arrived_at >= :from AND y.arrived_at < :to
        GROUP BY x.department, y.department ORDER BY COUNT(*) DESC, x.department, y.department
        """

    static let checkins = """
        SELECT CAST(COALESCE(SUM(k), 0) AS BIGINT), COUNT(*)
        FROM (SELECT COUNT(*) AS k FROM visit_checkin x WHERE \(periodRows) GROUP BY x.arrived_at, x.member) per_visit
        """

    static let promos = """
        SELECT promo, MIN(department), CAST(SUM(k) AS BIGINT),
            CAST(SUM(CASE WHEN EXISTS (SELECT 1 FROM visit_checkin c WHERE c.store = t.store AND c.arrived_at = t.arrived_at
                AND c.member = t.member AND c.at >= t.first_at) THEN 1 ELSE 0 END) AS BIGINT)
        FROM (SELECT x.member, x.store, x.arrived_at, x.promo, MIN(x.department) AS department, COUNT(*) AS k,
                MIN(x.at) AS first_at
            FROM visit_offer x WHERE \(periodRows)
            GROUP BY x.arrived_at, x.member, x.store, x.promo) t
        GROUP BY promo ORDER BY promo
        """
}
