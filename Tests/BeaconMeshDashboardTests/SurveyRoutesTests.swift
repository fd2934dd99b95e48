import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshTesting
import BeaconMeshWire
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

@testable import BeaconMeshDashboard

/// The survey page's routes in process: the real router with sign-in, an in-memory broker behind the dashboard's
/// MQTT client, an in-memory registry of survey seconds and a manual clock. Store 1 (Clothing 10, Housewares 20) and
/// store 2 have been heard; anna may see store 1, bert store 2.
@Suite("Survey page routes")
struct SurveyRoutesTests {
    typealias F = BoardFixtures
    static let key = "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:7"
    static let beacon = BeaconKey(key)!

    /// The dashboard under test and what it is connected to.
    struct Fixture {
        let broker = InMemoryBroker()
        let client: InMemoryMQTTClient
        let hub = DashboardHub(board: ChainBoard(broker: "b"))
        let clock = ManualClock(now: F.at(seconds: 100))
        let progress = InMemorySurveyProgress()
        let access = DashboardAccess(
            users: [
                DashboardUser(name: "anna", passwordHash: "$2b$12$unused", stores: .stores([1])),
                DashboardUser(name: "bert", passwordHash: "$2b$12$unused", stores: .stores([2])),
            ], secureCookies: false, logger: Logger(label: "test"))

        init() throws {
            client = try broker.client()
            try client.start()
            hub.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(store: 1, members: [], at: 90), at: F.at(seconds: 90))
            hub.receive(topic: F.topics.presence(store: 2), payload: F.snapshot(store: 2, members: [], at: 90), at: F.at(seconds: 90))
            hub.connection(changed: true, at: F.at(seconds: 90))
        }

        func application(survey: Bool = true) -> some ApplicationProtocol {
            Application(
                router: DashboardRoutes.router(
                    hub: hub, metricsText: { "" }, access: access,
                    survey: survey ? DashboardSurvey(progress: progress, client: client) : nil, clock: clock))
        }

        /// The headers of a signed-in browser's request from the survey page itself.
        func browser(_ user: String, json: Bool = true) -> HTTPFields {
            var headers = HTTPFields()
            headers[.cookie] = "\(SignInMiddleware.cookieName)=\(access.sessions.create(for: user, at: .now))"
            headers[HTTPField.Name("Sec-Fetch-Site")!] = "same-origin"
            headers[HTTPField.Name("Sec-Fetch-Mode")!] = "cors"
            if json { headers[.contentType] = "application/json" }
            return headers
        }

        /// The survey marks published so far.
        var marks: [MQTTMessage] { (try? broker.publications(matching: "beaconmesh/v1/stores/+/survey")) ?? [] }
    }

    static func post(_ client: some TestClientProtocol, store: UInt16 = 1, _ body: String, headers: HTTPFields) async throws -> (
        status: HTTPResponse.Status, body: String
    ) {
        try await client.execute(
            uri: "/api/stores/\(store)/survey/marks", method: .post, headers: headers, body: ByteBuffer(string: body)
        ) { ($0.status, String(buffer: $0.body)) }
    }

    static func get(_ client: some TestClientProtocol, _ uri: String, headers: HTTPFields) async throws -> (
        status: HTTPResponse.Status, body: String
    ) {
        try await client.execute(uri: uri, method: .get, headers: headers) { ($0.status, String(buffer: $0.body)) }
    }

    @Test(
        "a signed-in user's marks — a department, between departments, stop — go out on the store's survey topic at QoS 1, at the dashboard's time"
    )
    func marksArePublished() async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            let headers = fixture.browser("anna")
            let first = try await Self.post(client, #"{"beacon":"\#(Self.key)","department":10}"#, headers: headers)
            #expect(first.status == .ok, "\(first.body)")
            fixture.clock.advance(by: .seconds(30))
            let between = try await Self.post(client, #"{"beacon":"\#(Self.key.uppercased())","department":null}"#, headers: headers)
            #expect(between.status == .ok, "\(between.body)")
            fixture.clock.advance(by: .seconds(5))
            let stop = try await Self.post(client, #"{"beacon":"\#(Self.key)","stop":true}"#, headers: headers)
            #expect(stop.status == .ok, "\(stop.body)")

            let marks = fixture.marks
            #expect(marks.map(\.topic) == Array(repeating: "beaconmesh/v1/stores/1/survey", count: 3))
            #expect(marks.allSatisfy { $0.qos == .atLeastOnce && !$0.retained })
            #expect(
                try marks.map { try WireCodec.decodeSurveyMark($0.payload) } == [
                    SurveyMark(beacon: Self.beacon, department: 10, at: F.at(seconds: 100)),
                    SurveyMark(beacon: Self.beacon, department: nil, at: F.at(seconds: 130)),
                    .stop(Self.beacon, at: F.at(seconds: 135)),
                ])
            // The answer is the payload published, for the page to show.
            #expect(first.body == String(decoding: marks[0].payload, as: UTF8.self))
            #expect(stop.body.hasSuffix(#""stop":true}"#))
        }
    }

    @Test("a post another site's page makes is refused as /login's is, and publishes nothing", arguments: ["cross-site", "same-site"])
    func crossSite(site: String) async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            var headers = fixture.browser("anna")
            headers[HTTPField.Name("Sec-Fetch-Site")!] = site
            let refused = try await Self.post(client, #"{"beacon":"\#(Self.key)","department":10}"#, headers: headers)
            #expect(refused.status == .forbidden)
            #expect(refused.body == "a survey mark must come from this dashboard's own survey page\n")
            var login = HTTPFields()
            login[HTTPField.Name("Sec-Fetch-Site")!] = site
            login[.contentType] = "application/x-www-form-urlencoded"
            let signIn = try await client.execute(
                uri: "/login", method: .post, headers: login, body: ByteBuffer(string: "name=anna&password=whatever")
            ) { $0.status }
            #expect(signIn == .forbidden, "the sign-in form refuses the same")
        }
        #expect(fixture.marks.isEmpty)
    }

    @Test("another store's user gets 403 for the page, its data and a mark; nobody signed in gets 401 or /login")
    func otherStoresAndStrangers() async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            let bert = fixture.browser("bert")
            #expect(try await Self.get(client, "/stores/1/survey", headers: bert).status == .forbidden)
            #expect(try await Self.get(client, "/api/stores/1/survey", headers: bert).status == .forbidden)
            let mark = try await Self.post(client, #"{"beacon":"\#(Self.key)","department":10}"#, headers: bert)
            #expect(mark.status == .forbidden && mark.body == "bert may not see store 1\n")
            #expect(try await Self.get(client, "/stores/2/survey", headers: bert).status == .ok, "bert's own store")

            var stranger = HTTPFields()
            stranger[.accept] = "text/html"
            let page = try await client.execute(uri: "/stores/1/survey", method: .get, headers: stranger) { $0 }
            #expect(page.status == .seeOther && page.headers[.location] == "/login?next=%2Fstores%2F1%2Fsurvey")
            stranger[.contentType] = "application/json"
            let anonymous = try await Self.post(client, #"{"beacon":"\#(Self.key)","department":10}"#, headers: stranger)
            #expect(anonymous.status == .unauthorized)
        }
        #expect(fixture.marks.isEmpty)
    }

    @Test(
        "a mark with a malformed beacon, an unknown or impossible department or a wrong shape is refused with one line, and nothing is published",
        arguments: [
            (#"{"beacon":"ibeacon:x:1:2","department":10}"#, "'ibeacon:x:1:2' is not a beacon key"),
            (#"{"beacon":"ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:70000","department":10}"#, "is not a beacon key"),
            (#"{"beacon":"ibeacon:x\n\u0007:1:2","department":10}"#, "'ibeacon:x??:1:2' is not a beacon key"),
            (#"{"beacon":7,"department":10}"#, "'beacon' must be the carried beacon's key, a string"),
            (#"{"department":10}"#, "'beacon' must be"),
            (#"{"beacon":"\#(key)","department":30}"#, "department 30 is not a department of store 1 (it has 10, 20)"),
            (#"{"beacon":"\#(key)","department":70000}"#, "department 70000 is not a number from 0 to 65535"),
            (#"{"beacon":"\#(key)","department":-1}"#, "department -1 is not a number from 0 to 65535"),
            (#"{"beacon":"\#(key)","department":"10"}"#, "'department' must be a department number, or null"),
            (#"{"beacon":"\#(key)","department":10.5}"#, "'department' must be a department number, or null"),
            (#"{"beacon":"\#(key)"}"#, "'department' is missing"),
            (#"{"beacon":"\#(key)","department":10,"stop":"yes"}"#, "'stop' must be true or false"),
            (#"[{"beacon":"\#(key)","department":10}]"#, "the mark must be a JSON object"),
            ("beacon=x&department=10", "the mark is not JSON"),
            ("", "the mark is not JSON"),
        ])
    func malformed(body: String, says: String) async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            let refused = try await Self.post(client, body, headers: fixture.browser("anna"))
            #expect(refused.status == .badRequest)
            #expect(refused.body.contains(says), "\(refused.body)")
            #expect(refused.body.hasSuffix("\n") && refused.body.dropLast().allSatisfy { $0 != "\n" && $0 != "\r" }, "\(refused.body)")
        }
        #expect(fixture.marks.isEmpty)
    }

    @Test("a mark that is not JSON or too large is refused, and one while the broker is lost is 503, unsent")
    func notSent() async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            let good = #"{"beacon":"\#(Self.key)","department":10}"#
            var form = fixture.browser("anna", json: false)
            form[.contentType] = "application/x-www-form-urlencoded"
            #expect(try await Self.post(client, good, headers: form).status == .unsupportedMediaType)
            let padded = #"{"beacon":"\#(Self.key)","department":10,"x":"\#(String(repeating: "x", count: 5000))"}"#
            #expect(try await Self.post(client, padded, headers: fixture.browser("anna")).status == .contentTooLarge)

            fixture.client.simulateConnectionLoss()
            let lost = try await Self.post(client, good, headers: fixture.browser("anna"))
            #expect(lost.status == .serviceUnavailable && lost.body == "the dashboard has lost the broker: the mark was not sent\n")
            #expect(fixture.marks.isEmpty, "a mark sent late would label the wrong place")
            fixture.client.restoreConnection()
            var charset = fixture.browser("anna")
            charset[.contentType] = "application/json; charset=utf-8"
            #expect(try await Self.post(client, good, headers: charset).status == .ok)
        }
        #expect(fixture.marks.count == 1)
    }

    @Test("the page's data: every department the dashboard knows with its name and seconds, those only the registry has unmarkable")
    func progress() async throws {
        let fixture = try Fixture()
        fixture.progress.seconds.withLock { $0 = [1: [10: 42, 30: 7], 2: [20: 5]] }
        try await fixture.application().test(.router) { client in
            let reply = try await Self.get(client, "/api/stores/1/survey", headers: fixture.browser("anna"))
            #expect(reply.status == .ok)
            let data = try WireCodec.parse(Array(reply.body.utf8))
            #expect(
                data["store"] == .int(1) && data["name"] == .string("San Francisco") && data["now"] == .int(F.at(seconds: 100).milliseconds)
            )
            #expect(data["connection"]?["state"] == .string("connected"))
            #expect(
                data["departments"]
                    == .array([
                        .object([("department", .int(10)), ("name", .string("Clothing")), ("seconds", .int(42)), ("markable", .bool(true))]
                        ),
                        .object([
                            ("department", .int(20)), ("name", .string("Housewares")), ("seconds", .int(0)), ("markable", .bool(true)),
                        ]),
                        .object([
                            ("department", .int(30)), ("name", .string("Department 30")), ("seconds", .int(7)), ("markable", .bool(false)),
                        ]),
                    ]))

            fixture.progress.seconds.withLock { $0[1]?[20] = 3 }
            let later = try WireCodec.parse(
                Array(try await Self.get(client, "/api/stores/1/survey", headers: fixture.browser("anna")).body.utf8))
            guard case .array(let departments)? = later["departments"] else { throw TestSupportError("no departments: \(later)") }
            #expect(departments.map { $0["seconds"] } == [.int(42), .int(3), .int(7)], "the seconds as the registry has them now")

            fixture.progress.failure.withLock { $0 = "database is locked" }
            let failed = try await Self.get(client, "/api/stores/1/survey", headers: fixture.browser("anna"))
            #expect(failed.status == .serviceUnavailable && failed.body == "the survey samples cannot be read: database is locked\n")
        }
    }

    @Test("the page is the survey skeleton of its store with its own script; without --db every survey route is 404 saying so")
    func pageAndWithoutDatabase() async throws {
        let fixture = try Fixture()
        try await fixture.application().test(.router) { client in
            let page = try await Self.get(client, "/stores/1/survey", headers: fixture.browser("anna", json: false))
            #expect(page.status == .ok)
            #expect(
                page.body.contains(#"<body data-page="survey" data-store="1""#) && page.body.contains(#"<script src="/assets/survey.js">"#))
            #expect(page.body.contains("Signed in as anna"))
            let script = try await Self.get(client, "/assets/survey.js", headers: fixture.browser("anna", json: false))
            #expect(script.status == .ok && script.body == DashboardWeb.surveyScript)
            #expect(try await Self.get(client, "/stores/70000/survey", headers: fixture.browser("anna")).status == .badRequest)
        }
        try await fixture.application(survey: false).test(.router) { client in
            let line = "surveying needs --db: the registry that keeps the survey samples\n"
            for uri in ["/stores/1/survey", "/api/stores/1/survey"] {
                let reply = try await Self.get(client, uri, headers: fixture.browser("anna"))
                #expect(reply.status == .notFound && reply.body == line, "\(uri)")
            }
            let mark = try await Self.post(client, #"{"beacon":"\#(Self.key)","department":10}"#, headers: fixture.browser("anna"))
            #expect(mark.status == .notFound && mark.body == line)
        }
        #expect(fixture.marks.isEmpty)
    }
}
