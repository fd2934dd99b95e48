import BeaconMeshTesting
import Foundation
import Testing

/// Shopper analytics end to end: shoppers walk a real store (the department nodes played through mosquitto), the real
/// coordinator decides and writes the history through its registry writer, and the numbers come out the same from
/// `beacon-coordinator report --json`, from the dashboard's API and on its page in a real browser — on SQLite and on
/// PostgreSQL.
@Suite("Shopper analytics end to end", .serialized)
struct AnalyticsEndToEndTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    @Test(
        "a scripted visit day gives the exact analytics object (new and repeat members, guests, departments with dwell, flows, a till check-in after a promo) from report, the API and the page",
        arguments: Backend.allCases)
    func scriptedDay(backend: Backend) async throws {
        let database: String
        switch backend {
        case .sqlite: database = "mesh.sqlite"
        case .postgres: database = try PostgresServer.shared().createDatabase()
        }
        let from = Mesh.nowMilliseconds - 60_000
        try await DashboardMesh.run(
            database: database, tills: [20],
            prepare: { directory in ["--db", backend == .sqlite ? directory + "/mesh.sqlite" : database] }
        ) { mesh in
            let events = try await MosquittoClients.subscribe(port: mesh.broker.port, filter: "beaconmesh/v1/stores/1/events", qos: 1)
            defer { Task { await events.stop() } }
            try await mesh.shoppers.nodeStatus(department: 10, online: true)
            try await mesh.shoppers.nodeStatus(department: 20, online: true)
            // Ana (11 visits before: a repeat member) in Clothing long enough for the shirts promo, then Housewares;
            // Zoë (her first visit: a new member) in Housewares; a guest (a beacon of no member) in Clothing.
            mesh.shoppers.place(1, in: 10)
            mesh.shoppers.place(50, in: 10)
            // Until the shirts promo fires for Ana (its dwell passed): the guest beside her has stayed as long.
            #expect(
                await events.waitForLine(timeout: .seconds(15)) { $0.contains(#""type":"promo""#) && $0.contains("shirts") } != nil,
                "\(mesh.coordinator.transcript)")
            mesh.shoppers.place(50, in: nil)
            mesh.shoppers.place(1, in: 20)
            mesh.shoppers.place(4, in: 20)
            guard await events.waitForLine(timeout: .seconds(15), where: { $0.contains(#""type":"moved""#) }) != nil else {
                Issue.record("Ana never moved: \(mesh.coordinator.transcript)")
                return
            }
            // At the Housewares till (she is heard near it), Ana checks in, after the shirts promo of her visit.
            try await MosquittoClients.publish(
                port: mesh.broker.port, topic: "beaconmesh/v1/stores/1/checkins",
                string: #"{"v":1,"id":"till-1","member":"ana","department":20,"till":"housewares-1","at":\#(Mesh.nowMilliseconds)}"#,
                qos: 1)
            #expect(
                await events.waitForLine(timeout: .seconds(10)) { $0.contains(#""type":"checkin""#) && $0.contains("till-1") } != nil,
                "Ana's check-in was not accepted: \(events.lines.filter { $0.contains("checkin") })")
            // Zoë greeted in Housewares before both go.
            #expect(
                await events.waitForLine(timeout: .seconds(10)) { $0.contains(#""type":"arrived""#) && $0.contains(#""id":"zoe""#) } != nil,
                "\(events.lines)")
            mesh.shoppers.place(1, in: nil)
            mesh.shoppers.place(4, in: nil)
            for member in ["ana", "zoe"] {
                let left = await events.waitForLine(timeout: .seconds(15)) {
                    $0.contains(#""type":"left""#) && $0.contains(#""id":"\#(member)""#)
                }
                #expect(left != nil, "\(member) never left")
            }
            let to = Mesh.nowMilliseconds + 60_000
            let api = "\(mesh.dashboardURL)/api/stores/1/analytics?from=\(from)&to=\(to)"

            // The guest counts once its last reading is exitAfter old; the visits once written: poll the API.
            let analytics = await eventually(timeout: .seconds(20), interval: .milliseconds(300)) { () -> Analytics? in
                guard let (status, body) = try? await HTTP.get(api), status == 200, let analytics = Analytics(body),
                    analytics.visits == [2, 1, 1, 1]
                else { return nil }
                return analytics
            }
            let last = try await HTTP.get(api).body
            let got = try #require(analytics, "the API never showed 2 members and 1 guest: \(last)")

            // The exact numbers, from what the coordinator decided (its events).
            let decided = events.lines.compactMap(Mesh.payload(of:))
            func event(_ type: String, _ member: String) -> [String: Any]? {
                decided.first { $0["type"] as? String == type && ($0["member"] as? [String: Any])?["id"] as? String == member }
            }
            let arrived = try #require(event("arrived", "ana")?["at"] as? Int64)
            let moved = try #require(event("moved", "ana")?["at"] as? Int64)
            let anaLength = try #require(event("left", "ana")?["dwellSeconds"] as? Int)
            let zoeLength = try #require(event("left", "zoe")?["dwellSeconds"] as? Int)
            // members, newMembers, repeatMembers, guests
            #expect(got.visits == [2, 1, 1, 1])
            #expect(got.departments.map(\.department) == [10, 20])
            #expect(got.departments.map(\.name) == ["Clothing", "Housewares"])
            #expect(got.departments.map(\.visits) == [1, 2])
            // Dwell within a second of what was decided: Clothing from Ana's arrival to her move; Housewares the rest of
            // her visit (to her last reading) and Zoë's whole visit.
            let clothing = Int((moved - arrived + 500) / 1000)
            #expect(abs((got.departments.first?.total ?? 0) - clothing) <= 1, "Clothing \(got.departments) vs decided \(clothing) s")
            let housewares = anaLength - clothing + zoeLength
            #expect(abs((got.departments.last?.total ?? 0) - housewares) <= 2, "Housewares \(got.departments) vs \(housewares) s")
            #expect(got.flows == [[10, 20, 1]])
            // The shirts promo was followed by a check-in in the same visit: uptake 1.
            #expect(got.promos == ["shirts:10:1:1"])
            #expect(got.checkins == [1, 1])
            #expect(got.hourlyMembers == 2 && got.hourlyGuests == 1)
            #expect(Set([got.dwellMedian, got.dwellP90]) == Set([min(anaLength, zoeLength), max(anaLength, zoeLength)]))

            // The same object from the report command, computed by the database again.
            let report = try Mesh.program(
                "beacon-coordinator",
                [
                    "report", "--db", backend == .sqlite ? mesh.directory + "/mesh.sqlite" : database, "--store", "1",
                    "--from", "\(from)", "--to", "\(to)", "--json",
                ])
            #expect(await report.waitForExit(timeout: .seconds(20)) == .exited(0), "\(report.transcript)")
            let reported = try #require(Analytics(report.stdoutLines.joined()), "\(report.transcript)")
            #expect(reported.object == got.object, "report and API differ")
            let table = try Mesh.program(
                "beacon-coordinator",
                ["report", "--db", backend == .sqlite ? mesh.directory + "/mesh.sqlite" : database, "--store", "1", "--from", "\(from)"])
            #expect(await table.waitForExit(timeout: .seconds(20)) == .exited(0))
            #expect(table.stdoutLines.contains { $0.hasPrefix("Members: 2 (new 1, repeat 1); guest visits: 1") }, "\(table.transcript)")

            // One table as CSV.
            let csv = try await HTTP.get("\(mesh.dashboardURL)/stores/1/analytics.csv?table=departments&from=\(from)&to=\(to)")
            #expect(csv.status == 200 && csv.body.contains("\r\n20,Housewares,2,"), "\(csv.body)")

            // Bad input: one line, a 400, nothing else.
            for (query, words) in [
                ("from=yesterday", "'from' must be epoch milliseconds"), ("from=1&from=2", "more than once"),
                ("from=\(to)&to=\(from)", "the period is empty"), ("to=%27%3B%20DROP%20TABLE%20visit_history%3B--", "'to' must be"),
            ] {
                let answer = try await HTTP.get("\(mesh.dashboardURL)/api/stores/1/analytics?\(query)")
                #expect(
                    answer.status == 400 && answer.body.contains(words) && answer.body.split(separator: "\n").count == 1,
                    "\(query): \(answer)")
            }
            #expect(try await HTTP.get("\(mesh.dashboardURL)/api/stores/99999/analytics").status == 400)
            #expect(try await HTTP.get(api).body == last, "the bad requests changed nothing")

            if backend == .sqlite { try await Self.checkPage(mesh: mesh, from: from, to: to, expected: got) }

            // Forgetting Ana (while the coordinator runs) takes her history with her: the analytics lose her visit, the
            // guest stays, and the promo only she was offered is nowhere in the SQLite file or in pg_dump's data.
            let db = backend == .sqlite ? mesh.directory + "/mesh.sqlite" : database
            func stored() throws -> [(String, Data)] {
                switch backend {
                case .sqlite:
                    return try [db, db + "-wal"].filter { FileManager.default.fileExists(atPath: $0) }.map {
                        ($0, try Data(contentsOf: URL(fileURLWithPath: $0)))
                    }
                case .postgres:
                    let name = String(database.split(separator: "/").last ?? "")
                    return [("pg_dump --data-only", Data(try PostgresServer.shared().dumpData(database: name).utf8))]
                }
            }
            #expect(try stored().contains { $0.1.range(of: Data("shirts".utf8)) != nil }, "the look below would find the promo")
            let forget = try Mesh.program("beacon-coordinator", ["members", "forget", "ana", "--db", db])
            #expect(await forget.waitForExit(timeout: .seconds(20)) == .exited(0), "\(forget.transcript)")
            let after = try #require(Analytics(try await HTTP.get(api).body))
            #expect(after.visits == [1, 1, 0, 1])
            #expect(after.promos.isEmpty && after.flows.isEmpty && after.checkins == [0, 0])
            for (place, bytes) in try stored() {
                #expect(bytes.range(of: Data("shirts".utf8)) == nil, "Ana's promo is still in \(place)")
            }
        }
    }

    /// The store's analytics page in a real browser: charts drawn, the figures those of the API, no console error; its
    /// screenshot for the README (written to deploy/pictures/analytics.png when BEACONMESH_README_SCREENSHOTS is set).
    static func checkPage(mesh: DashboardMesh, from: Int64, to: Int64, expected: Analytics) async throws {
        let browser = try await Browser.start(width: 1280, height: 2400)
        do {
            try await browser.open("\(mesh.dashboardURL)/stores/1/analytics?from=\(from)&to=\(to)")
            let page = try #require(
                try await browser.waitFor(
                    """
                    var bars = document.querySelectorAll('svg.chart rect.bar');
                    if (!bars.length) return null;
                    function text(id) { return document.getElementById(id).textContent; }
                    var drawn = Array.prototype.filter.call(bars, function (b) { return b.getBBox().height > 0 && b.getBBox().width > 0; });
                    return {charts: document.querySelectorAll('svg.chart').length, drawn: drawn.length,
                            titled: Array.prototype.every.call(document.querySelectorAll('svg.chart'),
                                function (s) { return !!s.querySelector('title') && !!s.querySelector('desc'); }),
                            members: text('figure-members'), newMembers: text('figure-newMembers'),
                            repeatMembers: text('figure-repeatMembers'), guests: text('figure-guests'),
                            checkins: text('figure-checkins'),
                            housewares: document.querySelector('#chart-departments rect[data-label="Housewares"]').getAttribute('data-value'),
                            walks: document.querySelector('#chart-flows rect[data-from="Clothing"][data-to="Housewares"]').getAttribute('data-value'),
                            overflow: document.documentElement.scrollWidth > window.innerWidth,
                            documentTitle: document.title, heading: text('title')};
                    """, timeout: .seconds(10)) as? [String: Any])
            #expect(page["charts"] as? Int == 6)
            #expect((page["drawn"] as? Int ?? 0) >= 4, "\(page)")
            #expect(page["titled"] as? Bool == true)
            #expect(page["members"] as? String == "\(expected.visits[0])")
            #expect(page["newMembers"] as? String == "\(expected.visits[1])")
            #expect(page["repeatMembers"] as? String == "\(expected.visits[2])")
            #expect(page["guests"] as? String == "\(expected.visits[3])")
            #expect(page["checkins"] as? String == "\(expected.checkins[0])")
            #expect(page["housewares"] as? String == "\(expected.departments.last?.median ?? -1)")
            #expect(page["walks"] as? String == "1")
            #expect(page["overflow"] as? Bool == false)
            // Titled with the store's name, as every other page is.
            #expect(page["documentTitle"] as? String == "San Francisco analytics · BeaconMesh")
            #expect(page["heading"] as? String == "San Francisco analytics")
            let shot = try await browser.screenshot()
            try shot.write(to: URL(fileURLWithPath: try DashboardBrowserTests.screenshotPath("analytics.png")))
            if ProcessInfo.processInfo.environment["BEACONMESH_README_SCREENSHOTS"] != nil {
                try shot.write(to: BuiltProducts.packageRoot.appendingPathComponent("deploy/pictures/analytics.png"))
            }
            // A phone: nothing wider than the screen.
            try await browser.resize(width: 390, height: 844)
            #expect(try await browser.evaluate("return document.documentElement.scrollWidth > window.innerWidth;") as? Bool == false)
            // The chain page lists the store.
            try await browser.open("\(mesh.dashboardURL)/analytics?from=\(from)&to=\(to)")
            let chain = try await browser.waitFor(
                "return document.querySelector('#table-stores a[href^=\"/stores/1/analytics\"]') ? true : null;")
            #expect(chain != nil, "the chain page does not list store 1")
            let errors = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
            #expect(errors.isEmpty, "console errors: \(errors)")
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
    }
}

/// The contract's analytics object as a test reads it (JSON through Foundation, not the program's own codec).
struct Analytics {
    struct Department: Equatable {
        var department: Int
        var name: String
        var visits: Int
        var median: Int
        var total: Int
    }

    let object: NSDictionary
    /// members, newMembers, repeatMembers, guests
    let visits: [Int]
    let dwellMedian: Int
    let dwellP90: Int
    let departments: [Department]
    /// [from, to, count] each
    let flows: [[Int]]
    /// count, visitsWithCheckin
    let checkins: [Int]
    /// "id:department:offers:visitsWithCheckinAfter" each
    let promos: [String]
    let hourlyMembers: Int
    let hourlyGuests: Int

    init?(_ text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary,
            object["v"] as? Int == 1, let visits = object["visits"] as? [String: Int], let dwell = object["dwellSeconds"] as? [String: Int],
            let departments = object["departments"] as? [[String: Any]], let flows = object["flows"] as? [[String: Int]],
            let checkins = object["checkins"] as? [String: Int], let promos = object["promos"] as? [[String: Any]],
            let hourly = object["hourly"] as? [[String: Int]]
        else { return nil }
        self.object = object
        self.visits = ["members", "newMembers", "repeatMembers", "guests"].map { visits[$0] ?? -1 }
        dwellMedian = dwell["median"] ?? -1
        dwellP90 = dwell["p90"] ?? -1
        self.departments = departments.map { item in
            let dwell = item["dwellSeconds"] as? [String: Int] ?? [:]
            return Department(
                department: item["department"] as? Int ?? -1, name: item["name"] as? String ?? "", visits: item["visits"] as? Int ?? -1,
                median: dwell["median"] ?? -1, total: dwell["total"] ?? -1)
        }
        self.flows = flows.map { [$0["from"] ?? -1, $0["to"] ?? -1, $0["count"] ?? -1] }
        self.checkins = [checkins["count"] ?? -1, checkins["visitsWithCheckin"] ?? -1]
        self.promos = promos.map {
            "\($0["id"] as? String ?? ""):\($0["department"] as? Int ?? -1):\($0["offers"] as? Int ?? -1):\($0["visitsWithCheckinAfter"] as? Int ?? -1)"
        }
        hourlyMembers = hourly.reduce(0) { $0 + ($1["members"] ?? 0) }
        hourlyGuests = hourly.reduce(0) { $0 + ($1["guests"] ?? 0) }
    }
}
