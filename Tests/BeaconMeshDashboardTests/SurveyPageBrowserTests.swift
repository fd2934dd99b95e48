import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshTesting
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import BeaconMeshDashboard

/// The survey page as a surveyor uses it: a real headless Chromium on a phone-sized screen, the dashboard's real web
/// server and broker feed (`DashboardServer`, `DashboardFeed`, a real `MQTTClient`) on a real mosquitto, and
/// `mosquitto_sub` reading what the page's buttons published.
///
/// The dashboard runs in the test's process, with an in-memory `SurveyProgressReading`: `beacon-dashboard` passes
/// the registry's survey seconds to the server only once the registry keeps survey samples (issue 36's registry side).
@Suite("the survey page in a browser", .serialized)
struct SurveyPageBrowserTests {
    static let key = "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:7"
    static let anna = (name: "anna", password: "anna-store-1-pass")
    static let bert = (name: "bert", password: "bert-store-2-pass")

    /// The dashboard in this process: its server on a free loopback port and its feed, on `broker`.
    struct Dashboard {
        let url: String
        let progress: InMemorySurveyProgress
        let group: ServiceGroup
        let running: Task<Void, any Error>

        static func start(broker: MosquittoBroker) async throws -> Dashboard {
            var logger = Logger(label: "test.dashboard")
            logger.logLevel = .warning
            let access = DashboardAccess(
                users: [
                    DashboardUser(name: anna.name, passwordHash: PasswordHash.make(anna.password), stores: .stores([1])),
                    DashboardUser(name: bert.name, passwordHash: PasswordHash.make(bert.password), stores: .stores([2])),
                ], secureCookies: false, logger: logger)
            MQTTLibrary.initialize()
            let client = try MQTTClient(
                configuration: try BrokerConnection(url: broker.url).mqttConfiguration(clientID: nil, cleanSession: true, lastWill: nil),
                logger: logger)
            let hub = DashboardHub(board: ChainBoard(broker: broker.url))
            let progress = InMemorySurveyProgress()
            let bound = Mutex<Int?>(nil)
            let server = try DashboardServer.service(
                hub: hub, listen: ListenAddress(host: "127.0.0.1", port: 0), metricsText: { "" }, access: access,
                survey: DashboardSurvey(progress: progress, client: client), logger: logger
            ) { address in bound.withLock { $0 = address.port } }
            let feed = DashboardFeed(client: client, hub: hub, stores: [], logger: logger)
            let group = ServiceGroup(configuration: .init(services: [.init(service: server), .init(service: feed)], logger: logger))
            let running = Task { try await group.run() }
            guard let port = await eventually(timeout: .seconds(20), { bound.withLock { $0 } }) else {
                await group.triggerGracefulShutdown()
                throw TestSupportError("the dashboard's server did not start")
            }
            return Dashboard(url: "http://127.0.0.1:\(port)", progress: progress, group: group, running: running)
        }

        func stop() async {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
        }
    }

    /// Where the tests leave their screenshots: `.build/e2e`, beside the end-to-end tests'.
    static func screenshotPath(_ name: String) throws -> String {
        let folder = BuiltProducts.packageRoot.appendingPathComponent(".build/e2e").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/" + name
    }

    @Test(
        "a store-1 user signs in on a phone, picks the beacon from those the store hears (by its member's name), marks Clothing and stop: mosquitto_sub sees both marks; the seconds gathered refresh by themselves; a store-2 user gets 403 there"
    )
    func surveyFromAPhone() async throws {
        let broker = try await MosquittoBroker.start()
        // Store 1's coordinator's retained snapshot: what the dashboard knows of its departments and their names.
        try await MosquittoClients.publish(
            port: broker.port, topic: "beaconmesh/v1/stores/1/presence",
            string: """
                {"v":1,"store":1,"name":"San Francisco","updatedAt":\(WallClock.now().milliseconds),"members":[],\
                "occupancy":{"10":{"members":0,"guests":0,"name":"Clothing"},"20":{"members":0,"guests":0,"name":"Housewares"},\
                "30":{"members":0,"guests":0,"name":"Automotive"}},"nodes":[]}
                """, qos: 1, retain: true)
        let marks = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/1/survey", qos: 1)
        let dashboard = try await Dashboard.start(broker: broker)
        dashboard.progress.seconds.withLock { $0 = [1: [10: 42, 20: 5]] }
        let browser = try await Browser.start(width: 390, height: 844)
        do {
            try await browser.open(dashboard.url + "/stores/1/survey")
            try await browser.signIn(name: Self.anna.name, password: Self.anna.password)
            let buttons =
                try await browser.waitFor(
                    """
                    if (location.pathname !== '/stores/1/survey') return null;
                    var buttons = document.querySelectorAll('#departments button[data-department]');
                    if (buttons.length !== 3) return null;
                    return Array.prototype.map.call(buttons, function (b) { return b.textContent; });
                    """, timeout: .seconds(15)) as? [String]
            #expect(
                buttons == ["Clothing42 s", "Housewares5 s", "Automotive0 s"], "the department buttons: \(String(describing: buttons))")

            // On a phone: nothing wider than the screen, every button a thumb's size.
            let layout = try #require(
                try await browser.evaluate(
                    """
                    var heights = Array.prototype.map.call(document.querySelectorAll('button.mark'),
                      function (b) { return b.getBoundingClientRect().height; });
                    return {overflow: document.documentElement.scrollWidth > window.innerWidth, buttons: heights.length,
                            smallest: Math.min.apply(null, heights)};
                    """) as? [String: Any])
            #expect(layout["overflow"] as? Bool == false, "the page is wider than the phone: \(layout)")
            #expect(layout["buttons"] as? Int == 5 && (layout["smallest"] as? Double ?? 0) >= 44, "\(layout)")

            // A department pressed before a beacon is chosen: the page asks for one, nothing is published.
            _ = try await browser.evaluate("document.querySelector('button[data-department=\"10\"]').click(); return true;")
            let asked =
                try await browser.waitFor(
                    "var m = document.getElementById('message').textContent; return m ? m : null;", timeout: .seconds(5)) as? String
            #expect(asked == "⚠ Enter the beacon you carry first.")

            // Nobody types the key: node 10/a hears Ana's fob (a batch a second, as a node sends them), the page lists
            // it by her name among the beacons heard, and a tap picks it.
            dashboard.progress.owners.withLock { $0 = [BeaconKey(Self.key)!: .member(id: "ana", name: "Ana Souza")] }
            var listed: String?
            for seq in 1...20 where listed == nil {
                try await MosquittoClients.publish(
                    port: broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings",
                    string: """
                        {"v":1,"store":1,"department":10,"node":"a","boot":"b","seq":\(seq),"sentAt":\(WallClock.now().milliseconds),\
                        "sightings":[{"beacon":"\(Self.key)","rssi":-58.4,"count":3,"proximity":"near","lastSeen":\(WallClock.now().milliseconds)}]}
                        """, qos: 0)
                listed =
                    try await browser.waitFor(
                        "var b = document.querySelector('#heard button[data-beacon]'); return b ? b.textContent : null;",
                        timeout: .seconds(1))
                    as? String
            }
            #expect(listed == "Ana Souza-58 dBm in Clothing · \(Self.key)", "the beacons heard: \(listed ?? "none")")
            _ = try await browser.evaluate("document.querySelector('#heard button[data-beacon]').click(); return true;")
            #expect(try await browser.evaluate("return document.getElementById('beacon').value;") as? String == Self.key)
            _ = try await browser.evaluate("document.querySelector('button[data-department=\"10\"]').click(); return true;")
            let inClothing =
                try await browser.waitFor(
                    """
                    var text = document.getElementById('current').textContent;
                    var button = document.querySelector('button[data-department="10"]');
                    return text.indexOf('In Clothing since') === 0 && button.classList.contains('current') ? text : null;
                    """, timeout: .seconds(10)) as? String
            #expect(inClothing?.hasSuffix(Self.key) == true, "\(inClothing ?? "not marked")")
            let first = await marks.waitForLine(timeout: .seconds(10)) { $0.contains(#""department":10"#) }
            try await browser.screenshot().write(to: URL(fileURLWithPath: try Self.screenshotPath("dashboard-survey.png")))

            _ = try await browser.evaluate("document.getElementById('stop').click(); return true;")
            let stopped = try await browser.waitFor(
                "var t = document.getElementById('current').textContent; return t.indexOf('Stopped since') === 0 ? t : null;",
                timeout: .seconds(10))
            #expect(stopped != nil, "the page never said the survey stopped")
            let last = await marks.waitForLine(timeout: .seconds(10)) { $0.contains(#""stop":true"#) }
            #expect(
                first?.hasPrefix(#"beaconmesh/v1/stores/1/survey {"v":1,"beacon":"\#(Self.key)","department":10,"at":"#) == true,
                "\(marks.lines)")
            #expect(
                last?.hasPrefix(#"beaconmesh/v1/stores/1/survey {"v":1,"beacon":"\#(Self.key)","department":null,"at":"#) == true,
                "\(marks.lines)")
            #expect(marks.lines.count == 2, "exactly the two marks pressed: \(marks.lines)")

            // The seconds gathered come back every few seconds, without a reload.
            _ = try await browser.evaluate("window.samePage = 'yes'; return true;")
            dashboard.progress.seconds.withLock { $0 = [1: [10: 61, 20: 5]] }
            let refreshed = try await browser.waitFor(
                "return document.querySelector('button[data-department=\"10\"] .seconds').textContent === '1 min 01 s';",
                timeout: .seconds(10))
            #expect(refreshed != nil, "the seconds did not refresh")
            #expect(try await browser.evaluate("return window.samePage;") as? String == "yes", "the page was reloaded")
            #expect(try await browser.evaluate("return localStorage.getItem('beaconmesh.survey.beacon');") as? String == Self.key)
            let errors = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
            #expect(errors.isEmpty, "console errors on the survey page: \(errors)")

            // Store 2's manager may not survey store 1.
            _ = try await browser.evaluate("document.getElementById('sign-out').click(); return true;")
            _ = try await browser.waitFor("return location.pathname === '/login';", timeout: .seconds(10))
            try await browser.open(dashboard.url + "/login?next=%2Fstores%2F1%2Fsurvey")
            try await browser.signIn(name: Self.bert.name, password: Self.bert.password)
            let refused =
                try await browser.waitFor(
                    """
                    return location.pathname === '/stores/1/survey' && !document.getElementById('login') ? document.body.textContent : null;
                    """, timeout: .seconds(10)) as? String
            #expect(refused?.trimmingCharacters(in: .whitespacesAndNewlines) == "bert may not see store 1", "\(refused ?? "not there")")
            let status = try await browser.evaluate("return fetch('/stores/1/survey').then(function (r) { return r.status; });") as? Int
            #expect(status == 403)
            #expect(marks.lines.count == 2, "nothing more was published: \(marks.lines)")
        } catch {
            await browser.quit()
            await dashboard.stop()
            await marks.stop()
            await broker.stop()
            throw error
        }
        await browser.quit()
        await dashboard.stop()
        await marks.stop()
        await broker.stop()
    }
}
