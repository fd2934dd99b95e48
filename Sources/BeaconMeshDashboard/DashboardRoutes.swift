import BeaconMeshCore
import BeaconMeshMetrics
import BeaconMeshService
import BeaconMeshWire
import Hummingbird

/// The dashboard's HTTP routes: `/` the chain overview, `/stores/{store}` a store's live page, their event streams
/// (`/live`, `/stores/{store}/live`), `/api/stores` and `/api/stores/{store}` (the pages' data as JSON),
/// `/api/stores/{store}/presence` (the retained snapshot as received), the nodes pages (`/nodes` for the chain,
/// `/stores/{store}/nodes` for one store: `NodesPage`) and `/api/stores/{store}/nodes` (the `nodes list --json` list of
/// that store), with `--db` the analytics pages and API
/// (`AnalyticsRoutes`), the survey page, its data and its marks (`SurveyRoutes`; 404 without `--db`), `/healthz`,
/// `/metrics` and the pages' stylesheet and scripts. A store number that is not 0–65535 is a 400 with one line saying
/// so; a store the signed-in user may not see is a 403; a store this dashboard does not show (`--store`) or has no
/// snapshot of yet is a 404.
///
/// With `access` (`--users`), `SignInMiddleware` lets only signed-in requests through and `SignInRoutes` adds `/login`
/// and `/logout`; the overview and its stream then carry only the user's stores. Every response carries
/// `SecurityHeadersMiddleware`'s headers. The pages' time (ages, highlights, "today" of the analytics) is `clock`'s:
/// `WallClock` in the program, a `ManualClock` in tests.
public enum DashboardRoutes {
    public static func router(
        hub: DashboardHub, metricsText: @escaping @Sendable () -> String, access: DashboardAccess? = nil, https: Bool = false,
        analytics: AnalyticsSource? = nil, survey: DashboardSurvey? = nil, clock: any ServiceClock = WallClock()
    ) -> Router<DashboardRequestContext> {
        let router = Router(context: DashboardRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware(https: https))
        router.add(middleware: SignInMiddleware(access: access))
        if let access { SignInRoutes.add(to: router, access: access) }
        router.get("/") { _, context in
            page(DashboardPage.overview(signedInAs: context.user?.name))
        }
        router.get("/live") { _, context in
            ServerSentEvents.response(hub: hub, subject: .chain, stores: context.stores, clock: clock)
        }
        router.get("/stores/:store") { _, context in
            storeNumber(context, hub: hub).response { page(DashboardPage.store($0, signedInAs: context.user?.name)) }
        }
        router.get("/stores/:store/live") { _, context in
            storeNumber(context, hub: hub).response {
                ServerSentEvents.response(hub: hub, subject: .store($0), stores: context.stores, clock: clock)
            }
        }
        router.get("/api/stores") { _, context in
            json(WireCodec.serialize(hub.read { ChainPageData.json($0, at: clock.now(), stores: context.stores) }))
        }
        router.get("/api/stores/:store") { _, context in
            storeNumber(context, hub: hub).response { store in
                var photos: [String: Int] = [:]
                let data: JSONValue? = hub.read { board in
                    board.stores[store].map {
                        StorePageData.json($0, coordinator: board.coordinator(of: store), at: clock.now(), photosSent: &photos)
                    }
                }
                guard let data else { return text(.notFound, "nothing heard of store \(store) yet") }
                return json(WireCodec.serialize(data))
            }
        }
        router.get("/api/stores/:store/presence") { _, context in
            storeNumber(context, hub: hub).response { store in
                guard let payload = hub.read({ $0.stores[store]?.snapshotPayload }) else {
                    return text(.notFound, "no presence snapshot of store \(store) yet")
                }
                return json(payload)
            }
        }
        router.get("/nodes") { _, context in
            let (model, lost) = hub.read { (NodesPageModel($0, stores: context.stores), $0.isLinkLost) }
            return page(NodesPage.html(model, linkLost: lost, signedInAs: context.user?.name, now: clock.now()))
        }
        router.get("/stores/:store/nodes") { _, context in
            storeNumber(context, hub: hub).response { store in
                let (model, name, lost) = hub.read {
                    (NodesPageModel($0, store: store, stores: context.stores), $0.board(of: store).name, $0.isLinkLost)
                }
                return page(NodesPage.html(model, storeName: name, linkLost: lost, signedInAs: context.user?.name, now: clock.now()))
            }
        }
        router.get("/api/stores/:store/nodes") { _, context in
            storeNumber(context, hub: hub).response { store in
                json(WireCodec.encode(nodeEntries: hub.read { $0.nodes.entries(store: store) }))
            }
        }
        if let analytics { AnalyticsRoutes.add(to: router, source: analytics, hub: hub, clock: clock) }
        SurveyRoutes.add(to: router, survey: survey, hub: hub, clock: clock)
        router.get("/api/openapi.json") { _, _ in
            json(Array(DashboardOpenAPI.document.utf8))
        }
        router.get("/healthz") { _, _ in
            let (connection, stores) = hub.read { ($0.connection, $0.stores.count) }
            let connected = connection == .connected
            let state = connected ? "connected" : (connection == .connecting ? "connecting" : "lost")
            let body = WireCodec.serialize(
                .object([
                    ("status", .string(connected ? "ok" : "degraded")), ("broker", .string(state)),
                    ("stores", .int(Int64(stores))), ("pages", .int(Int64(hub.connectedPages))),
                ]))
            return json(body, status: connected ? .ok : .serviceUnavailable)
        }
        MetricsRoute.add(to: router, exposition: metricsText)
        router.get("/assets/dashboard.css") { _, _ in
            asset(DashboardStylesheet.text, type: "text/css; charset=utf-8")
        }
        router.get("/assets/dashboard.js") { _, _ in
            asset(DashboardScript.text, type: "text/javascript; charset=utf-8")
        }
        router.get("/assets/survey.js") { _, _ in
            asset(DashboardWeb.surveyScript, type: "text/javascript; charset=utf-8")
        }
        return router
    }

    /// The `:store` parameter as a store this dashboard shows and the request may see, or the response that says why not.
    static func storeNumber(_ context: DashboardRequestContext, hub: DashboardHub) -> Result<UInt16, ResponseFailure> {
        let raw = context.parameters.get("store") ?? ""
        guard !raw.isEmpty, raw.count <= 5, raw.allSatisfy({ $0.isASCII && $0.isNumber }), let store = UInt16(raw) else {
            return .failure(ResponseFailure(text(.badRequest, "bad store number '\(raw)': a store is a number from 0 to 65535")))
        }
        guard context.stores.allows(store) else {
            return .failure(ResponseFailure(text(.forbidden, "\(context.user?.name ?? "you") may not see store \(store)")))
        }
        guard hub.read({ $0.shows(store) }) else {
            return .failure(ResponseFailure(text(.notFound, "store \(store) is not shown by this dashboard")))
        }
        return .success(store)
    }

    /// A response carried as a `Result` failure.
    struct ResponseFailure: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    static func page(_ html: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private static func asset(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-cache"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func text(_ status: HTTPResponse.Status, _ line: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: line + "\n")))
    }
}

extension Result where Failure == DashboardRoutes.ResponseFailure {
    /// Both sides as a response: the failure's, or `success` turned into one.
    func response(_ success: (Success) -> Response) -> Response {
        switch self {
        case .success(let value): return success(value)
        case .failure(let failure): return failure.response
        }
    }
}
