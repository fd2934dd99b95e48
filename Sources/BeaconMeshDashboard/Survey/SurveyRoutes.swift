import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Hummingbird

/// The survey routes: `/stores/{store}/survey` the page a surveyor carries on their phone, `/api/stores/{store}/survey`
/// its data (`SurveyPageData`: the store's departments and the seconds gathered in each, from `--db`, and the beacons
/// the store hears now, whose sightings the dashboard subscribes to from the page's first request), and
/// `POST /api/stores/{store}/survey/marks` a mark (`SurveyMarkRequest`), published to the store's survey topic.
///
/// Without `--db` (no `DashboardSurvey`) each answers 404 saying that surveying needs it, as the analytics pages are
/// not there without it. Otherwise they keep to the store rules of the other routes (400 a bad store number, 403 a
/// store the user may not see, 404 a store this dashboard does not show). A mark is refused with one line: 403 when a
/// browser says it comes from another site (as `/login`'s form), 415 when it is not JSON, 413 when over 4 KiB, 400
/// when it names no beacon key or a department the dashboard does not know of the store — nothing is published then —
/// and 503 while the broker is lost. A published mark is answered with its payload; its time is `clock`'s.
enum SurveyRoutes {
    /// The largest mark body taken.
    static let markLimit = 4096

    static func add(to router: Router<DashboardRequestContext>, survey: DashboardSurvey?, hub: DashboardHub, clock: any ServiceClock) {
        router.get("/stores/:store/survey") { _, context in
            guard survey != nil else { return withoutDatabase() }
            return DashboardRoutes.storeNumber(context, hub: hub).response { store in
                DashboardRoutes.page(DashboardPage.survey(store, signedInAs: context.user?.name))
            }
        }
        router.get("/api/stores/:store/survey") { _, context in
            guard let survey else { return withoutDatabase() }
            let store: UInt16
            switch DashboardRoutes.storeNumber(context, hub: hub) {
            case .success(let number): store = number
            case .failure(let failure): return failure.response
            }
            let now = clock.now()
            survey.listen(to: store, at: now)
            let heard = hub.read { $0.heard.heard(store: store, at: now) }
            let seconds: [UInt16: Int]
            let owners: [BeaconKey: SurveyBeaconOwner]
            do {
                seconds = try await survey.progress.surveySeconds(store: store)
                owners = try await survey.progress.surveyBeacons(Set(heard.map(\.beacon)), store: store)
            } catch {
                return DashboardRoutes.text(.serviceUnavailable, "the survey samples cannot be read: \(error)")
            }
            let data = hub.read { SurveyPageData.json($0.board(of: store), seconds: seconds, heard: heard, owners: owners, at: now) }
            return DashboardRoutes.json(WireCodec.serialize(data))
        }
        router.post("/api/stores/:store/survey/marks") { request, context in
            guard let survey else { return withoutDatabase() }
            // Another site's page must not mark for a signed-in surveyor (the session cookie is SameSite=Strict too).
            if CrossSiteRequest.isRefused(request) {
                return DashboardRoutes.text(.forbidden, "a survey mark must come from this dashboard's own survey page")
            }
            let store: UInt16
            switch DashboardRoutes.storeNumber(context, hub: hub) {
            case .success(let number): store = number
            case .failure(let failure): return failure.response
            }
            let type = request.headers[.contentType]?.lowercased() ?? ""
            guard type == "application/json" || type.hasPrefix("application/json;") else {
                return DashboardRoutes.text(.unsupportedMediaType, "a survey mark is JSON (Content-Type: application/json)")
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: markLimit)
            } catch {
                return DashboardRoutes.text(.contentTooLarge, "a survey mark is at most \(markLimit) bytes")
            }
            let departments = hub.read { Set($0.board(of: store).departments.map { $0.id }) }
            let mark: SurveyMark
            do throws(SurveyMarkRequest.Refusal) {
                mark = try SurveyMarkRequest.mark(Array(buffer: body), store: store, departments: departments, at: clock.now())
            } catch {
                return DashboardRoutes.text(.badRequest, error.description)
            }
            do throws(SurveyPublishFailure) {
                try survey.publish(mark, store: store)
            } catch {
                return DashboardRoutes.text(.serviceUnavailable, error.description)
            }
            return DashboardRoutes.json(WireCodec.encode(mark))
        }
    }

    /// The answer of every survey route without `--db`.
    private static func withoutDatabase() -> Response {
        DashboardRoutes.text(.notFound, "surveying needs --db: the registry that keeps the survey samples")
    }
}
