import BeaconMeshTesting
import Foundation
import Testing

/// The dashboard as a person sees it: a real headless Chromium on the real dashboard, fed by the real coordinator
/// through a real mosquitto.
@Suite("beacon-dashboard in a browser", .serialized)
struct DashboardBrowserTests {
    /// What a member's row shows, read from the page's DOM.
    static let rowScript = """
        var row = document.querySelector('tr[data-member="' + arguments[0] + '"]');
        if (!row) return null;
        var img = row.querySelector('td.photo img');
        var initials = row.querySelector('td.photo .initials');
        return {name: row.cells[1].textContent, drink: row.cells[2].textContent, department: row.cells[3].textContent,
                confidence: row.cells[4].textContent, proximity: row.cells[5].textContent, time: row.cells[6].textContent,
                visit: row.cells[7].textContent,
                photo: img ? img.getAttribute('src').slice(0, 23) : null,
                photoLoaded: img ? (img.complete && img.naturalWidth > 0) : false,
                initials: initials ? initials.textContent : null, arrived: row.classList.contains('arrived'),
                height: row.getBoundingClientRect().height};
        """

    /// Runs `body`, then quits `browser` and stops `mesh`, whether `body` threw or not.
    static func closing(_ browser: Browser, _ mesh: DashboardMesh, _ body: () async throws -> Void) async throws {
        try await closing(browser, stopping: { await mesh.stop() }, body)
    }

    /// The same, stopping with `stop`: for a test that restarts its mesh, `stop` reads the mesh as it is at the end.
    static func closing(_ browser: Browser, stopping stop: () async -> Void, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            await browser.quit()
            await stop()
            throw error
        }
        await browser.quit()
        await stop()
    }

    /// Where the tests leave their screenshots (the README's picture is one of them).
    static func screenshotPath(_ name: String) throws -> String {
        let folder = BuiltProducts.packageRoot.appendingPathComponent(".build/e2e").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/" + name
    }

    @Test(
        "store page: Ana with her photo; Zoë and 李小龍 arrive later without a reload, highlighted, with initials; Ana leaves and disappears; the overview counts them; no console errors"
    )
    func storePageLive() async throws {
        let mesh = try await DashboardMesh.start()
        let browser = try await Browser.start(width: 1280, height: 1000)
        try await Self.closing(browser, mesh) {
            try await mesh.shoppers.nodeStatus(department: 10, online: true)
            try await mesh.shoppers.nodeStatus(department: 20, online: true)
            try await mesh.shoppers.nodeStatus(department: 30, online: false)
            try await browser.open(mesh.dashboardURL + "/stores/1")
            _ = try await browser.evaluate("window.samePage = 'yes'; return true;")

            // Ana arrives in Clothing: her row shows her photo, name, drink, department and visit number.
            mesh.shoppers.place(1, in: 10)
            let ana = try #require(
                try await browser.waitFor(Self.rowScript, ["ana"], timeout: .seconds(15)) as? [String: Any],
                "Ana's row never appeared: \(mesh.coordinator.transcript)")
            #expect(ana["name"] as? String == "Ana Souza")
            #expect(ana["drink"] as? String == "Flat white")
            #expect(ana["department"] as? String == "Clothing")
            #expect((ana["confidence"] as? String)?.wholeMatch(of: /[0-9]{1,3}%/) != nil, "\(ana["confidence"] ?? "none")")
            #expect(ana["visit"] as? String == "#12")
            #expect((ana["photo"] as? String)?.hasPrefix("data:image/jpeg;base64") == true)
            let photoLoaded = try await browser.waitFor(
                """
                var img = document.querySelector('tr[data-member="ana"] td.photo img');
                return !!img && img.complete && img.naturalWidth > 0;
                """, timeout: .seconds(5))
            #expect(photoLoaded != nil, "Ana's photo did not load as an image")

            // Zoë and 李小龍 arrive in Housewares later: their rows appear in the same page, highlighted, with initials.
            mesh.shoppers.place(4, in: 20)
            mesh.shoppers.place(8, in: 20)
            let zoe = try #require(try await browser.waitFor(Self.rowScript, ["zoe"], timeout: .seconds(15)) as? [String: Any])
            #expect(zoe["name"] as? String == "Zoë Martin")
            #expect(zoe["initials"] as? String == "ZM")
            #expect(zoe["photo"] is NSNull || zoe["photo"] == nil)
            #expect(zoe["drink"] as? String == "—")
            #expect(zoe["department"] as? String == "Housewares")
            let li = try #require(try await browser.waitFor(Self.rowScript, ["li"], timeout: .seconds(5)) as? [String: Any])
            #expect(li["name"] as? String == "李小龍")
            #expect(li["initials"] as? String == "李")
            let highlighted = try await browser.waitFor(
                "return !!document.querySelector('tr[data-member=\"zoe\"].arrived, tr[data-member=\"li\"].arrived');", timeout: .seconds(2))
            #expect(highlighted != nil, "a new arrival was not highlighted")
            #expect(try await browser.evaluate("return window.samePage;") as? String == "yes", "the page was reloaded")
            #expect(try await browser.evaluate("return document.body.classList.contains('stale');") as? Bool == false)
            try await browser.settled()
            try await browser.screenshot().write(to: URL(fileURLWithPath: try Self.screenshotPath("dashboard-store.png")))
            let status = try await browser.evaluate("return document.getElementById('status').textContent;") as? String ?? ""
            #expect(status.contains("Live") && status.contains("3 members"), "status line: \(status)")

            // The highlight fades after about 1.5 s.
            let faded = try await browser.waitFor("return !document.querySelector('tr.arrived');", timeout: .seconds(4))
            #expect(faded != nil, "the arrival highlight did not fade")

            // A phone and a wall display: nothing wider than the screen, every row shown; type grows on the wall.
            for (width, height, name) in [(390, 844, "phone"), (1920, 1080, "wall")] {
                try await browser.resize(width: width, height: height)
                let layout = try #require(
                    try await browser.evaluate(
                        """
                        var rows = document.querySelectorAll('#members tbody tr');
                        return {overflow: document.documentElement.scrollWidth > window.innerWidth, rows: rows.length,
                                visible: Array.prototype.every.call(rows, function (r) { return r.getBoundingClientRect().height > 20; }),
                                font: parseFloat(getComputedStyle(document.documentElement).fontSize)};
                        """) as? [String: Any])
                #expect(layout["overflow"] as? Bool == false, "\(name): the page is wider than the screen")
                #expect(layout["rows"] as? Int == 3 && layout["visible"] as? Bool == true, "\(name): \(layout)")
                let font = layout["font"] as? Double ?? 0
                #expect(name == "phone" ? font <= 16 : font >= 20, "\(name): root font \(font)px")
                try await browser.screenshot().write(to: URL(fileURLWithPath: try Self.screenshotPath("dashboard-\(name).png")))
            }
            try await browser.resize(width: 1280, height: 1000)

            // Ana leaves: no node hears her for exitAfter (2 s); her row goes, the others stay, still the same page.
            mesh.shoppers.place(1, in: nil)
            let gone = try await browser.waitFor("return !document.querySelector('tr[data-member=\"ana\"]');", timeout: .seconds(15))
            #expect(gone != nil, "Ana's row is still there after she left")
            #expect(try await browser.evaluate(Self.rowScript, ["zoe"]) != nil)
            #expect(try await browser.evaluate("return window.samePage;") as? String == "yes", "the page was reloaded")
            let events = try await browser.evaluate("return document.getElementById('events').textContent;") as? String ?? ""
            #expect(events.contains("Ana Souza left after"), "recent events: \(events)")
            let storeErrors = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
            #expect(storeErrors.isEmpty, "console errors on the store page: \(storeErrors)")

            // The overview counts the two members still in, and shows the offline Automotive node.
            try await browser.open(mesh.dashboardURL + "/")
            let card = try #require(
                try await browser.waitFor(
                    """
                    var card = document.querySelector('.store-card[data-store="1"]');
                    if (!card || card.querySelector('.members').textContent !== '2') return null;
                    return {name: card.querySelector('h3').textContent, members: card.querySelector('.members').textContent,
                            offline: card.querySelector('.nodes-offline').textContent, attention: card.classList.contains('attention'),
                            problems: (card.querySelector('.problems') || {}).textContent || '',
                            totalMembers: document.getElementById('total-members').textContent};
                    """, timeout: .seconds(10)) as? [String: Any])
            #expect((card["name"] as? String)?.hasPrefix("San Francisco") == true)
            #expect(card["totalMembers"] as? String == "2")
            #expect(card["offline"] as? String == "1 offline")
            #expect(card["attention"] as? Bool == true)
            #expect((card["problems"] as? String)?.contains("Automotive · a") == true, "\(card)")
            try await browser.screenshot().write(to: URL(fileURLWithPath: try Self.screenshotPath("dashboard-overview.png")))
            let overviewErrors = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
            #expect(overviewErrors.isEmpty, "console errors on the overview: \(overviewErrors)")
        }
    }

    @Test(
        "the page says its data is stale when the dashboard goes away (SIGTERM exits 0 with the page open) or loses the broker, and is live again by itself when they are back"
    )
    func staleAndReconnect() async throws {
        var mesh = try await DashboardMesh.start()
        let browser = try await Browser.start()
        try await Self.closing(browser, stopping: { await mesh.stop() }) {
            mesh.shoppers.place(1, in: 10)
            try await browser.open(mesh.dashboardURL + "/stores/1")
            _ = try await browser.evaluate("window.samePage = 'yes'; return true;")
            #expect(try await browser.waitFor(Self.rowScript, ["ana"], timeout: .seconds(15)) != nil)

            let started = ContinuousClock.now
            let status = await mesh.dashboard.stop(with: SIGTERM, timeout: .seconds(10))
            #expect(status == .exited(0), "\(mesh.dashboard.transcript)")
            #expect(ContinuousClock.now - started < .seconds(5), "shutting down with a live page took too long")
            let stale =
                try await browser.waitFor(
                    """
                    return document.body.classList.contains('stale') ? document.getElementById('status').textContent : null;
                    """, timeout: .seconds(5)) as? String
            #expect(stale?.contains("Reconnecting") == true, "status: \(stale ?? "not stale")")
            #expect(try await browser.evaluate(Self.rowScript, ["ana"]) != nil, "the last data should stay on screen")

            try await mesh.restartDashboard()
            let live = try await browser.waitFor(
                """
                return !document.body.classList.contains('stale') && document.getElementById('status').textContent.indexOf('Live') >= 0;
                """, timeout: .seconds(15))
            #expect(live != nil, "the page did not come back by itself")
            #expect(try await browser.evaluate(Self.rowScript, ["ana"]) != nil)
            #expect(try await browser.evaluate("return window.samePage;") as? String == "yes", "the page was reloaded")

            // The broker goes away: the dashboard is up but its data is old, and the page says so; back when it is.
            await mesh.broker.kill()
            let brokerLost =
                try await browser.waitFor(
                    """
                    return document.body.classList.contains('stale') ? document.getElementById('status').textContent : null;
                    """, timeout: .seconds(15)) as? String
            #expect(brokerLost?.contains("lost the broker") == true, "status: \(brokerLost ?? "not stale")")
            try await mesh.broker.start()
            let liveAgain = try await browser.waitFor(
                """
                return !document.body.classList.contains('stale') && document.getElementById('status').textContent.indexOf('Live') >= 0;
                """, timeout: .seconds(20))
            #expect(liveAgain != nil, "the page did not come back after the broker did")
        }
    }
    /// A member whose name is markup that would run script if it were ever put into the page as HTML.
    static let markupName = #"<img src=x onerror="window.pwned=1;document.title='pwned'">"#

    @Test(
        "sign-in in the browser: sent to /login, sign in through the form, see the store (a markup name shows as text and runs nothing), sign out, back to /login"
    )
    func signInThroughTheForm() async throws {
        var mesh = try await DashboardMesh.start(
            extraMembers: [
                #"mallory,"\#(Self.markupName.replacingOccurrences(of: "\"", with: "\"\""))",Tea,ibeacon:\#(Mesh.uuid):1:9,,0,,"#
            ],
            prepare: { try await DashboardUsers.make(in: $0) })
        let browser = try await Browser.start(width: 1280, height: 900)
        try await Self.closing(browser, stopping: { await mesh.stop() }) {
            mesh.shoppers.place(1, in: 10)
            mesh.shoppers.place(9, in: 20)
            try await browser.open(mesh.dashboardURL + "/stores/1")
            let login =
                try await browser.evaluate(
                    "return {path: location.pathname, search: location.search, form: !!document.getElementById('login')};")
                as? [String: Any]
            #expect(
                login?["path"] as? String == "/login" && login?["form"] as? Bool == true, "not sent to /login: \(String(describing: login))"
            )
            #expect(login?["search"] as? String == "?next=%2Fstores%2F1")

            // A wrong password: the form again, saying so.
            _ = try await browser.evaluate(
                """
                document.getElementById('name').value = arguments[0];
                document.getElementById('password').value = 'not-her-password';
                document.getElementById('sign-in').click(); return true;
                """, [DashboardUsers.anna.name])
            let refused =
                try await browser.waitFor(
                    "var m = document.getElementById('login-message'); return m ? m.textContent : null;", timeout: .seconds(10)) as? String
            #expect(refused == "Wrong name or password.")
            try await browser.screenshot().write(to: URL(fileURLWithPath: try Self.screenshotPath("dashboard-login.png")))
            _ = try await browser.consoleMessages()  // the form's own 401, logged by the browser: not an error of the page

            _ = try await browser.evaluate(
                """
                document.getElementById('name').value = arguments[0];
                document.getElementById('password').value = arguments[1];
                document.getElementById('sign-in').click(); return true;
                """, [DashboardUsers.anna.name, DashboardUsers.anna.password])
            let mallory = try #require(
                try await browser.waitFor(Self.rowScript, ["mallory"], timeout: .seconds(20)) as? [String: Any],
                "the store page with the member never showed: \(mesh.dashboard.transcript)")
            #expect(try await browser.evaluate("return location.pathname;") as? String == "/stores/1")
            #expect(try await browser.waitFor(Self.rowScript, ["ana"], timeout: .seconds(10)) != nil, "Ana's row never showed")
            #expect(mallory["name"] as? String == Self.markupName, "the name is not shown as text: \(mallory)")
            let ran = try #require(
                try await browser.evaluate(
                    """
                    return {pwned: window.pwned === 1, title: document.title,
                            images: document.querySelectorAll('#members img:not(.avatar)').length,
                            signedIn: document.getElementById('signed-in-as').textContent};
                    """) as? [String: Any])
            #expect(ran["pwned"] as? Bool == false && ran["title"] as? String != "pwned", "the markup ran: \(ran)")
            #expect(ran["images"] as? Int == 0, "the markup became an element: \(ran)")
            #expect(ran["signedIn"] as? String == "Signed in as anna")
            let errors = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
            #expect(errors.isEmpty, "console errors on the signed-in store page: \(errors)")
            try await browser.screenshot().write(to: URL(fileURLWithPath: try Self.screenshotPath("dashboard-signed-in.png")))

            // The dashboard restarts (sessions live in memory): the open page notices its session is gone and goes
            // to /login by itself, from where signing in again leads back to the store.
            _ = await mesh.dashboard.stop(with: SIGTERM, timeout: .seconds(10))
            try await mesh.restartDashboard()
            let backToLogin = try await browser.waitFor(
                "return location.pathname === '/login' && location.search === '?next=%2Fstores%2F1';", timeout: .seconds(15))
            #expect(backToLogin != nil, "the page did not go to /login when its session ended")
            _ = try await browser.evaluate(
                """
                document.getElementById('name').value = arguments[0];
                document.getElementById('password').value = arguments[1];
                document.getElementById('sign-in').click(); return true;
                """, [DashboardUsers.anna.name, DashboardUsers.anna.password])
            #expect(try await browser.waitFor(Self.rowScript, ["ana"], timeout: .seconds(15)) != nil, "not back on the store page")

            // Sign out: back to /login, and the store page sends the browser there again.
            _ = try await browser.evaluate("document.getElementById('sign-out').click(); return true;")
            let out = try await browser.waitFor(
                "return location.pathname === '/login' && !!document.getElementById('login');", timeout: .seconds(10))
            #expect(out != nil, "sign-out did not lead to /login")
            try await browser.open(mesh.dashboardURL + "/stores/1")
            #expect(try await browser.evaluate("return location.pathname;") as? String == "/login", "the session outlived sign-out")
        }
    }
}

@Suite("beacon-dashboard alerts in a browser", .serialized)
struct DashboardAlertBrowserTests {
    @Test("a VIP arrives: her alert is on the store page's alerts panel within 1 s of her row, newest first, with its rule")
    func vipAlertOnThePage() async throws {
        let mesh = try await DashboardMesh.start(
            tiers: ["ana": "vip"],
            extraConfig: """
                alerts:
                  - {id: vip-arrived, store: 1, when: {memberArrived: {member: {tier: vip}}}}
                """)
        let browser = try await Browser.start(width: 1280, height: 1000)
        try await DashboardBrowserTests.closing(browser, mesh) {
            try await mesh.shoppers.nodeStatus(department: 10, online: true)
            try await browser.open(mesh.dashboardURL + "/stores/1")
            #expect(try await browser.waitFor("return document.querySelector('#alerts li.empty') !== null;", timeout: .seconds(10)) != nil)
            mesh.shoppers.place(4, in: 10)  // Zoë first: no tier, no alert
            mesh.shoppers.place(1, in: 10)
            let row = try await browser.waitFor("return document.querySelector('tr[data-member=\"ana\"]') !== null;", timeout: .seconds(15))
            #expect(row != nil, "Ana's row never appeared: \(mesh.coordinator.transcript)")
            let rowAt = ContinuousClock.now
            let alert =
                try await browser.waitFor(
                    """
                    var li = document.querySelector('#alerts li[data-rule="vip-arrived"]');
                    return li ? {text: li.textContent, count: document.querySelectorAll('#alerts li[data-rule]').length} : null;
                    """, timeout: .seconds(5)) as? [String: Any]
            #expect(ContinuousClock.now - rowAt < .seconds(1), "the alert came \(ContinuousClock.now - rowAt) after her row")
            #expect(
                (alert?["text"] as? String)?.contains("Ana Souza (tier vip) arrived in Clothing") == true, "\(String(describing: alert))")
            #expect(alert?["count"] as? Int == 1, "none for Zoë: \(String(describing: alert))")
            try await browser.settled()
            let shot = try await browser.screenshot()
            try shot.write(to: URL(fileURLWithPath: try DashboardBrowserTests.screenshotPath("dashboard-alert.png")))
            if ProcessInfo.processInfo.environment["BEACONMESH_README_SCREENSHOTS"] != nil {
                try shot.write(to: BuiltProducts.packageRoot.appendingPathComponent("deploy/pictures/dashboard-alert.png"))
            }
            let errors = try await browser.consoleMessages().filter { $0.hasPrefix("SEVERE") }
            #expect(errors.isEmpty, "console errors on the store page: \(errors)")
        }
    }
}
