import BeaconMeshTesting
import Foundation
import Testing

/// The fleet view as head office and a store manager see it: the real `beacon-dashboard` with a users file, fed
/// nodes' retained status (and a health report) through a real mosquitto by `mosquitto_pub`, looked at in a real
/// headless Chromium and through curl.
@Suite("beacon-dashboard's nodes pages in a browser", .serialized)
struct DashboardNodesBrowserTests {
    typealias Users = DashboardUsers

    static func statusTopic(_ store: Int, _ department: Int, _ node: String) -> String {
        "beaconmesh/v1/stores/\(store)/departments/\(department)/nodes/\(node)/status"
    }

    /// A node's retained status as the scanner publishes it; `config` the status's `config` object.
    static func status(_ state: String, _ version: String, config: String = #"{"store":null,"node":null}"#) -> String {
        #"{"v":1,"state":"\#(state)","version":"\#(version)","boot":"b1","source":"hci0","startedAt":\#(Mesh.nowMilliseconds),"config":\#(config)}"#
    }

    static let refusal = "unknown key 'rssi-floor'"

    /// The rows of the nodes table as the page shows them, or `null` until it has `count` of them.
    static let rowsScript = """
        var rows = document.querySelectorAll('#fleet tbody tr');
        if (rows.length !== arguments[0]) return null;
        return Array.prototype.map.call(rows, function (row) {
          var marker = row.querySelector('td.version .marker');
          return {node: row.getAttribute('data-node'), classes: row.className, state: row.querySelector('td.state').textContent,
                  version: row.querySelector('td.version').textContent, marker: marker ? marker.textContent : null,
                  department: row.querySelector('td.department').textContent,
                  storeConfig: row.querySelector('td.store-config').textContent, nodeConfig: row.querySelector('td.node-config').textContent,
                  uptime: row.querySelector('td.uptime').textContent,
                  behindHighlighted: getComputedStyle(row.querySelector('td.version .marker') || row).backgroundColor};
        });
        """

    @Test(
        "head office's /nodes: offline first, the node behind the newest version marked, a refused config with its reason, health after a report; the store page's node panel links to its nodes; the API is the nodes list; a store-1 user sees store 1 only"
    )
    func fleetView() async throws {
        let broker = try await MosquittoBroker.start()
        let directory = try Mesh.temporaryDirectory()
        let now = Mesh.nowMilliseconds
        // Store 1's coordinator's snapshot (its departments' names) and the nodes' retained statuses of two stores.
        try await MosquittoClients.publish(
            port: broker.port, topic: "beaconmesh/v1/stores/1/presence",
            string: """
                {"v":1,"store":1,"name":"San Francisco","updatedAt":\(now),"members":[],\
                "occupancy":{"10":{"members":0,"guests":0,"name":"Clothing"},"20":{"members":0,"guests":0,"name":"Housewares"},\
                "30":{"members":0,"guests":0,"name":"Automotive"}},"nodes":[]}
                """, qos: 1, retain: true)
        let statuses = [
            (
                Self.statusTopic(1, 10, "a"),
                Self.status("online", "1.4.0", config: #"{"store":{"revision":3,"state":"applied","error":null},"node":null}"#)
            ),
            (Self.statusTopic(1, 20, "a"), Self.status("offline", "1.4.0")),
            (
                Self.statusTopic(1, 30, "b"),
                Self.status(
                    "online", "1.3.2", config: #"{"store":null,"node":{"revision":2,"state":"refused","error":"\#(Self.refusal)"}}"#)
            ),
            (Self.statusTopic(2, 5, "a"), Self.status("online", "1.4.0")),
        ]
        for (topic, payload) in statuses {
            try await MosquittoClients.publish(port: broker.port, topic: topic, string: payload, qos: 1, retain: true)
        }
        let port = try FreePort.next()
        let dashboard: TestProcess
        do {
            let users = try await Users.make(in: directory)
            dashboard = try await DashboardMesh.startDashboard(brokerURL: broker.url, port: port, extra: users)
        } catch {
            await broker.stop()
            throw error
        }
        let base = "http://127.0.0.1:\(port)"
        let browser = try await Browser.start(width: 1280, height: 900)
        try await DashboardBrowserTests.closing(
            browser,
            stopping: {
                _ = await dashboard.stop(with: SIGTERM, timeout: .seconds(10))
                await broker.stop()
            }
        ) {
            // Head office signs in on the way to /nodes.
            try await browser.open(base + "/nodes")
            try await browser.signIn(name: Users.office.name, password: Users.office.password)
            _ = try await browser.waitFor("return location.pathname === '/nodes' ? true : null;", timeout: .seconds(10))
            let rows = try #require(
                try await browser.waitFor(Self.rowsScript, [4], timeout: .seconds(15)) as? [[String: Any]],
                "the nodes table never had 4 rows: \(dashboard.transcript)")
            #expect(rows.map { $0["node"] as? String } == ["1/20/a", "1/10/a", "1/30/b", "2/5/a"], "offline first: \(rows)")
            #expect(rows[0]["state"] as? String == "offline" && (rows[0]["classes"] as? String)?.contains("offline") == true)
            #expect(rows[0]["department"] as? String == "Housewares")
            #expect(rows.map { ($0["classes"] as? String)?.contains("behind") == true } == [false, false, true, false])
            #expect(rows[2]["marker"] as? String == "behind 1.4.0")
            #expect(rows[2]["behindHighlighted"] as? String != "rgba(0, 0, 0, 0)", "the behind marker has no highlight")
            #expect(rows[2]["nodeConfig"] as? String == "r2 refused: \(Self.refusal)")
            #expect((rows[2]["classes"] as? String)?.contains("refused") == true)
            #expect(rows[1]["storeConfig"] as? String == "r3 applied" && rows[1]["nodeConfig"] as? String == "none")
            let versions =
                try await browser.evaluate(
                    """
                    return Array.prototype.map.call(document.querySelectorAll('#versions li'), function (li) {
                      return li.getAttribute('data-version') + (li.classList.contains('behind') ? ' behind' : '');
                    });
                    """) as? [String]
            #expect(versions == ["1.4.0", "1.3.2 behind"])
            let summary = try await browser.evaluate("return document.getElementById('status').textContent;") as? String ?? ""
            #expect(summary.contains("4 nodes · 1 offline · 1 behind 1.4.0 · 1 config refused"), "\(summary)")

            // A health report (not retained) shows on the next load.
            try await MosquittoClients.publish(
                port: broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/health",
                string:
                    #"{"v":1,"uptime":3725,"adverts":9000,"advertsPerSec":41.5,"beacons":3,"batches":30,"dropped":0,"queued":0,"rssBytes":9000000}"#,
                qos: 0)
            let uptime = await eventually(timeout: .seconds(10), interval: .milliseconds(300)) { () -> String? in
                try? await browser.open(base + "/nodes")
                let rows = try? await browser.evaluate(Self.rowsScript, [4]) as? [[String: Any]]
                return rows.flatMap { $0[1]["uptime"] as? String }.flatMap { $0 == "—" ? nil : $0 }
            }
            #expect(uptime == "1h 02m", "the health report never showed")
            try await browser.settled()
            try await browser.screenshot().write(to: URL(fileURLWithPath: try DashboardBrowserTests.screenshotPath("dashboard-nodes.png")))

            // The store page's node panel links to the store's nodes page: store 1's nodes only, same order.
            try await browser.open(base + "/stores/1")
            _ = try await browser.waitFor("return document.querySelector('#nodes li') ? true : null;", timeout: .seconds(10))
            _ = try await browser.evaluate("document.getElementById('nodes-link').click(); return true;")
            let path = try await browser.waitFor(
                "return location.pathname === '/stores/1/nodes' && document.getElementById('fleet') ? location.pathname : null;",
                timeout: .seconds(10))
            #expect(path as? String == "/stores/1/nodes")
            let storeRows = try #require(try await browser.waitFor(Self.rowsScript, [3], timeout: .seconds(5)) as? [[String: Any]])
            #expect(storeRows.map { $0["node"] as? String } == ["1/20/a", "1/10/a", "1/30/b"])
            let console = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
            #expect(console.isEmpty, "console: \(console)")

            // The API: the `nodes list --json` objects of store 1.
            let api = try await Curl.request(base + "/api/stores/1/nodes", Curl.basic(Users.office.name, Users.office.password))
            #expect(api.status == 200 && api.header("content-type").first == "application/json", "\(api)")
            let list = try #require(try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? [[String: Any]], "\(api.body)")
            #expect(list.map { "\($0["department"] ?? "")/\($0["node"] ?? "")" } == ["10/a", "20/a", "30/b"])
            #expect(list.map { $0["version"] as? String } == ["1.4.0", "1.4.0", "1.3.2"])
            #expect(list[0]["uptime"] as? Int == 3725 && list[1]["uptime"] is NSNull)
            let refused = (list[2]["config"] as? [String: Any])?["node"] as? [String: Any]
            #expect(refused?["state"] as? String == "refused" && refused?["error"] as? String == Self.refusal)

            // Store 1's manager: store 2's nodes are 403, /nodes has store 1's rows only; nobody signed in: 401 and /login.
            let anna = Curl.basic(Users.anna.name, Users.anna.password)
            #expect(try await Curl.request(base + "/api/stores/2/nodes", anna).status == 403)
            #expect(try await Curl.request(base + "/stores/2/nodes", anna).status == 403)
            #expect(try await Curl.request(base + "/api/stores/1/nodes", anna).body == api.body)
            let annasPage = try await Curl.request(base + "/nodes", anna)
            #expect(annasPage.status == 200 && annasPage.body.contains(#"data-node="1/20/a""#), "\(annasPage.status)")
            #expect(!annasPage.body.contains(#"data-node="2/"#), "store 2's node leaked to a store-1 user")
            #expect(try await Curl.request(base + "/api/stores/1/nodes").status == 401)
            let redirected = try await Curl.request(base + "/stores/1/nodes", ["-H", "Accept: text/html"])
            #expect(redirected.status == 303 && redirected.header("location") == ["/login?next=%2Fstores%2F1%2Fnodes"])
        }
    }
}
