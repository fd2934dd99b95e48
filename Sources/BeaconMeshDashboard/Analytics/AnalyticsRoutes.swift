import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Foundation
import Hummingbird

/// The analytics routes the dashboard adds with `--db`: `/stores/{store}/analytics` (the charts),
/// `/stores/{store}/analytics.csv?table=…` (one table as CSV), `/api/stores/{store}/analytics?from=MS&to=MS` (the
/// contract's analytics object) and `/analytics` (the chain: the stores the user may see). `from` and `to` are epoch
/// milliseconds or local dates `YYYY-MM-DD[THH:MM]` (default the last 7 days).
///
/// Every answer keeps to the store rules of the other routes: a bad store number is a 400, a store the user may not
/// see a 403, a store this dashboard does not show (`--store`) a 404. A bad period is a 400 with one line saying which
/// value is wrong; a database that does not answer is a 503 naming it. Nothing here writes.
enum AnalyticsRoutes {
    static func add(to router: Router<DashboardRequestContext>, source: AnalyticsSource, hub: DashboardHub, clock: any ServiceClock) {
        router.get("/api/stores/:store/analytics") { request, context in
            await answer(request, context, hub: hub, source: source, clock: clock) { store, period, _ in
                let analytics = try await source.analytics(store: store, period: period)
                return response(WireCodec.encode(analytics), type: "application/json")
            }
        }
        router.get("/stores/:store/analytics") { request, context in
            await answer(request, context, hub: hub, source: source, clock: clock) { store, period, now in
                let analytics = try await source.analytics(store: store, period: period)
                let bounds = HourOfDayProfile.periods(at: now, calendar: localCalendar)
                let today = try await source.analytics(store: store, period: .init(from: bounds.today.from, to: bounds.today.to))
                let before = try await source.analytics(store: store, period: .init(from: bounds.before.from, to: bounds.before.to))
                let profile = HourOfDayProfile(today: today.hourly, before: before.hourly, at: now, calendar: localCalendar)
                let name = hub.read { $0.board(of: store).name }
                let html = AnalyticsPage.store(
                    analytics, named: name, profile: profile, signedInAs: context.user?.name, timeZone: .current, now: now)
                return response(Array(html.utf8), type: "text/html; charset=utf-8")
            }
        }
        router.get("/stores/:store/analytics.csv") { request, context in
            let name = request.uri.queryParameters["table"].map(String.init) ?? "summary"
            guard let table = AnalyticsCSV.Table(rawValue: name) else {
                let known = AnalyticsCSV.Table.allCases.map(\.rawValue).joined(separator: ", ")
                return text(.badRequest, "unknown table '\(name.prefix(40))': one of \(known)")
            }
            return await answer(request, context, hub: hub, source: source, clock: clock) { store, period, _ in
                let analytics = try await source.analytics(store: store, period: period)
                var response = response(Array(AnalyticsCSV.text(table, of: analytics).utf8), type: "text/csv; charset=utf-8")
                response.headers[.contentDisposition] =
                    #"attachment; filename="store-\#(store)-\#(table.rawValue)-\#(period.from.milliseconds)-\#(period.to.milliseconds).csv""#
                return response
            }
        }
        router.get("/analytics") { request, context in
            let now = clock.now()
            let period: AnalyticsPeriod
            do throws(RegistryFailure) {
                period = try parsePeriod(request, now: now)
            } catch {
                return text(.badRequest, error.description)
            }
            do {
                let stores = try await source.summaries(period: period).filter { summary in
                    context.stores.allows(summary.store) && hub.read { $0.shows(summary.store) }
                }
                let html = AnalyticsPage.chain(stores, period: period, signedInAs: context.user?.name, timeZone: .current, now: now)
                return response(Array(html.utf8), type: "text/html; charset=utf-8")
            } catch {
                return text(.serviceUnavailable, "the history cannot be read: \(source.describe(error))")
            }
        }
    }

    /// The server's local calendar (the dashboard's time zone), for "today" and weekdays.
    private static var localCalendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        return calendar
    }

    /// Checks the store and the period, then answers with `body`; a failure of the database is a 503.
    private static func answer(
        _ request: Request, _ context: DashboardRequestContext, hub: DashboardHub, source: AnalyticsSource,
        clock: any ServiceClock, _ body: (UInt16, AnalyticsPeriod, Timestamp) async throws -> Response
    ) async -> Response {
        let raw = context.parameters.get("store") ?? ""
        guard !raw.isEmpty, raw.count <= 5, raw.allSatisfy({ $0.isASCII && $0.isNumber }), let store = UInt16(raw) else {
            return text(.badRequest, "bad store number '\(raw.prefix(40))': a store is a number from 0 to 65535")
        }
        guard context.stores.allows(store) else { return text(.forbidden, "\(context.user?.name ?? "you") may not see store \(store)") }
        guard hub.read({ $0.shows(store) }) else { return text(.notFound, "store \(store) is not shown by this dashboard") }
        let now = clock.now()
        let period: AnalyticsPeriod
        do throws(RegistryFailure) {
            period = try parsePeriod(request, now: now)
        } catch {
            return text(.badRequest, error.description)
        }
        do {
            return try await body(store, period, now)
        } catch {
            return text(.serviceUnavailable, "the history cannot be read: \(source.describe(error))")
        }
    }

    /// The request's `from` and `to` (each at most once).
    private static func parsePeriod(_ request: Request, now: Timestamp) throws(RegistryFailure) -> AnalyticsPeriod {
        let parameters = request.uri.queryParameters
        for name in ["from", "to"] where parameters.getAll(name).count > 1 {
            throw RegistryFailure(.invalidRequest, "'\(name)' is given more than once")
        }
        return try AnalyticsPeriod.parse(
            from: parameters["from"].map(String.init), to: parameters["to"].map(String.init), now: now)
    }

    private static func response(_ bytes: [UInt8], type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private static func text(_ status: HTTPResponse.Status, _ line: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: line + "\n")))
    }
}
