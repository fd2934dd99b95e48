import BeaconMeshTesting
import Foundation
import Testing

/// Sign-in and per-store access against the real programs: the real coordinator deciding store 1, store 2's
/// snapshot on the real broker, and the real `beacon-dashboard` with a users file made by `users add`.
@Suite("beacon-dashboard sign-in and store access end to end", .serialized)
struct DashboardSignInTests {
    typealias Users = DashboardUsers

    /// Every route of the dashboard that shows data, a stream or the script.
    static let protectedRoutes = [
        "/", "/stores/1", "/stores/2", "/live", "/stores/1/live", "/api/stores", "/api/stores/1", "/api/stores/1/presence",
        "/metrics", "/assets/dashboard.js", "/no-such-page",
    ]

    /// Store 2's retained snapshot, as its coordinator would publish it: one member, "Secret Shopper", in Oakland.
    static func storeTwoSnapshot() -> String {
        let now = Mesh.nowMilliseconds
        return """
            {"v":1,"store":2,"name":"Oakland","updatedAt":\(now),\
            "members":[{"member":{"id":"secret","name":"Secret Shopper","favoriteDrink":"Mocha","visits":3,"lastVisitAt":null},\
            "department":5,"departmentName":"Bakery","proximity":"near","arrivedAt":\(now),"inDepartmentSince":\(now),\
            "lastSeen":\(now),"confidence":0.9}],\
            "occupancy":{"5":{"members":1,"guests":2}},"nodes":[{"department":5,"node":"a","state":"online"}]}
            """
    }

    static func publishStoreTwo(brokerPort: Int) async throws {
        try await MosquittoClients.publish(
            port: brokerPort, topic: "beaconmesh/v1/stores/2/presence", string: storeTwoSnapshot(), qos: 1, retain: true)
    }

    /// Waits until head office sees both stores with their members (Ana in store 1, the secret shopper in store 2).
    static func waitForBothStores(_ mesh: DashboardMesh) async throws {
        mesh.shoppers.place(1, in: 10)
        try await publishStoreTwo(brokerPort: mesh.broker.port)
        let seen = await eventually(timeout: .seconds(20), interval: .milliseconds(300)) { () -> Bool? in
            let one = try? await Curl.request(
                mesh.dashboardURL + "/api/stores/1/presence", Curl.basic(Users.office.name, Users.office.password))
            let two = try? await Curl.request(
                mesh.dashboardURL + "/api/stores/2/presence", Curl.basic(Users.office.name, Users.office.password))
            guard one?.body.contains("Ana Souza") == true, two?.body.contains("Secret Shopper") == true else { return nil }
            return true
        }
        #expect(seen == true, "head office never saw both stores: \(mesh.dashboard.transcript)")
    }

    @Test(
        "with --users, every route but /login and /healthz: 401 (Basic challenge) for scripts, 303 to /login for a browser; nothing of a store leaks"
    )
    func everyRouteNeedsSignIn() async throws {
        try await DashboardMesh.run(prepare: { try await Users.make(in: $0) }) { mesh in
            try await Self.waitForBothStores(mesh)
            let base = mesh.dashboardURL
            for route in Self.protectedRoutes {
                let script = try await Curl.request(base + route, maxTime: 5)
                #expect(script.status == 401, "\(route): \(script.status)")
                #expect(script.header("www-authenticate").first?.hasPrefix("Basic realm=") == true, "\(route): \(script.headers)")
                #expect(
                    !script.body.contains("Ana") && !script.body.contains("Secret") && !script.body.contains("beaconmesh_"),
                    "\(route): \(script.body)")
                let browser = try await Curl.request(base + route, ["-H", "Accept: text/html,application/xhtml+xml"], maxTime: 5)
                #expect(browser.status == 303, "\(route) from a browser: \(browser.status)")
                let next = route.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                #expect(browser.header("location") == ["/login?next=\(next)"], "\(route): \(browser.headers)")
                // A browser's own script (EventSource, fetch) gets 401 with no challenge: no password box over the page.
                let fetch = try await Curl.request(base + route, ["-H", "Sec-Fetch-Mode: cors"], maxTime: 5)
                #expect(fetch.status == 401 && fetch.header("www-authenticate").isEmpty, "\(route): \(fetch.headers)")
            }
            // Signing out without a session (it expired, the dashboard restarted) still lands on the form.
            let logout = try await Curl.request(base + "/logout", ["-X", "POST"])
            #expect(logout.status == 303 && logout.header("location") == ["/login"], "\(logout)")
            let health = try await Curl.request(base + "/healthz")
            #expect(health.status == 200 && health.body.contains("\"status\":\"ok\""), "\(health)")
            let login = try await Curl.request(base + "/login?next=%2Fstores%2F1")
            #expect(login.status == 200 && login.body.contains(#"<form id="login" method="post" action="/login">"#))
            #expect(login.body.contains(#"name="next" value="/stores/1""#))
            #expect(login.header("content-security-policy").first?.contains("script-src 'self'") == true)
        }
    }

    @Test("wrong passwords are 401; Basic and the form's cookie sign in; own store 200, another store's page, API and stream 403")
    func signInAndStoreAccess() async throws {
        try await DashboardMesh.run(prepare: { try await Users.make(in: $0) }) { mesh in
            try await Self.waitForBothStores(mesh)
            let base = mesh.dashboardURL
            let anna = Curl.basic(Users.anna.name, Users.anna.password)

            // Wrong password, unknown name: 401 both ways, and no cookie.
            for wrong in [Curl.basic(Users.anna.name, "anna-store-2-pass"), Curl.basic("nobody", Users.anna.password)] {
                let reply = try await Curl.request(base + "/api/stores/1/presence", wrong)
                #expect(reply.status == 401 && !reply.body.contains("Ana"), "\(reply)")
            }
            // Another site's page posting the form (the browser says so): refused, even with the right password.
            let crossSite = try await Curl.request(
                base + "/login", ["-H", "Sec-Fetch-Site: cross-site"] + Curl.loginForm(Users.anna.name, Users.anna.password))
            #expect(crossSite.status == 403 && crossSite.sessionCookie == nil, "\(crossSite)")
            let wrongForm = try await Curl.request(base + "/login", Curl.loginForm(Users.anna.name, "guess-1234"))
            #expect(wrongForm.status == 401 && wrongForm.body.contains("Wrong name or password."), "\(wrongForm)")
            #expect(wrongForm.sessionCookie == nil)

            // HTTP Basic: anna reads store 1, and gets 403 for store 2's page, API and stream.
            let own = try await Curl.request(base + "/api/stores/1/presence", anna)
            #expect(own.status == 200 && own.body.contains("Ana Souza"), "\(own)")
            #expect(try await Curl.request(base + "/stores/1", anna).status == 200)
            for route in ["/stores/2", "/api/stores/2", "/api/stores/2/presence", "/stores/2/live"] {
                let other = try await Curl.request(base + route, anna, maxTime: 5)
                #expect(other.status == 403, "\(route): \(other.status)")
                #expect(!other.body.contains("Secret") && !other.body.contains("Oakland"), "\(route): \(other.body)")
            }
            let metrics = try await Curl.request(base + "/metrics", anna)
            #expect(metrics.status == 200 && metrics.body.contains("beaconmesh_dashboard_messages_total"))
            // Head office sees store 2.
            let office = try await Curl.request(base + "/api/stores/2/presence", Curl.basic(Users.office.name, Users.office.password))
            #expect(office.status == 200 && office.body.contains("Secret Shopper"))

            // The form: 303 back to where anna was going, with a session cookie that scripts cannot read or send elsewhere.
            let signedIn = try await Curl.request(base + "/login", Curl.loginForm(Users.anna.name, Users.anna.password, next: "/stores/1"))
            #expect(signedIn.status == 303 && signedIn.header("location") == ["/stores/1"], "\(signedIn)")
            let setCookie = try #require(signedIn.header("set-cookie").first, "no session cookie: \(signedIn)")
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
                #expect(setCookie.contains(attribute), "\(setCookie)")
            }
            #expect(!setCookie.contains("Secure"), "plain HTTP: no Secure (the browser would drop the cookie)")
            #expect(signedIn.header("strict-transport-security").isEmpty)
            let cookie = ["--cookie", try #require(signedIn.sessionCookie)]
            let page = try await Curl.request(base + "/stores/1", cookie + ["-H", "Accept: text/html"])
            #expect(page.status == 200 && page.body.contains("Signed in as anna"), "\(page)")
            #expect(try await Curl.request(base + "/stores/2", cookie).status == 403)
            let api = try await Curl.request(base + "/api/stores", cookie)
            #expect(api.status == 200 && api.body.contains("\"store\":1,") && !api.body.contains("\"store\":2,"), "\(api.body)")

            // The live streams, read for 4 s while both stores change: anna's overview and store page carry store 1
            // only; bert's overview carries store 2 only.
            let brokerPort = mesh.broker.port
            let republish = Task {
                try? await paced(8, every: .milliseconds(500)) { _ in try? await Self.publishStoreTwo(brokerPort: brokerPort) }
            }
            async let annaChain = Curl.request(base + "/live", cookie, maxTime: 4)
            async let annaStore = Curl.request(base + "/stores/1/live", cookie, maxTime: 4)
            async let bertChain = Curl.request(base + "/live", Curl.basic(Users.bert.name, Users.bert.password), maxTime: 4)
            let (chain, store, other) = try await (annaChain, annaStore, bertChain)
            await republish.value
            let chainMessages = chain.body.split(separator: "\n").filter { $0.hasPrefix("data: ") }
            #expect(chain.status == 200 && chainMessages.count >= 2, "\(chain)")
            #expect(chainMessages.allSatisfy { $0.contains("\"store\":1,") && !$0.contains("\"store\":2,") && !$0.contains("Oakland") })
            #expect(store.status == 200 && store.body.contains("Ana Souza") && !store.body.contains("Secret Shopper"), "\(store.body)")
            let otherMessages = other.body.split(separator: "\n").filter { $0.hasPrefix("data: ") }
            #expect(other.status == 200 && otherMessages.count >= 2, "\(other)")
            #expect(otherMessages.allSatisfy { $0.contains("Oakland") && !$0.contains("San Francisco") && !$0.contains("\"store\":1,") })

            // Sign-out ends the session: the old cookie is worth nothing afterwards.
            let out = try await Curl.request(base + "/logout", cookie + ["-X", "POST"])
            #expect(out.status == 303 && out.header("location") == ["/login"], "\(out)")
            #expect(out.header("set-cookie").first?.contains("Max-Age=0") == true)
            #expect(try await Curl.request(base + "/api/stores", cookie).status == 401)
        }
    }

    @Test("10 failed sign-ins within a minute: 429 even with the right password, logged once with name and address; no password in the log")
    func guessingIsLimited() async throws {
        let guesses = (1...10).map { "guess-\($0)-pw" }
        try await DashboardMesh.run(prepare: { try await Users.make(in: $0, [Users.anna]) + ["--log-level", "trace"] }) { mesh in
            let base = mesh.dashboardURL
            for guess in guesses {
                let reply = try await Curl.request(base + "/login", Curl.loginForm(Users.anna.name, guess))
                #expect(reply.status == 401, "\(guess): \(reply.status)")
            }
            let blocked = try await Curl.request(base + "/login", Curl.loginForm(Users.anna.name, Users.anna.password))
            #expect(blocked.status == 429, "\(blocked)")
            #expect(blocked.header("retry-after") == ["60"])
            #expect(blocked.sessionCookie == nil)
            let basic = try await Curl.request(base + "/api/stores", Curl.basic(Users.anna.name, Users.anna.password))
            #expect(basic.status == 429 && !basic.body.contains("San Francisco"), "\(basic)")

            let lines = mesh.dashboard.stderrLines
            let blockLines = lines.filter { $0.contains("failed sign-ins within a minute") }
            #expect(blockLines.count == 1, "\(blockLines)")
            #expect(
                blockLines.first?.contains("user=anna") == true && blockLines.first?.contains("address=127.0.0.1") == true, "\(blockLines)")
            for secret in guesses + [Users.anna.password] {
                #expect(!lines.contains { $0.contains(secret) }, "a password is in the log: \(secret)")
            }
        }
    }

    @Test(
        "HTTPS with a certificate from make-certificates.sh --dashboard: verified against its CA, the cookie is Secure, plain HTTP gets nothing"
    )
    func https() async throws {
        let directory = try Mesh.temporaryDirectory()
        let tls = directory + "/tls"
        try await RepositoryScript.run(
            "deploy/make-certificates.sh", ["--out", tls, "--dashboard", "127.0.0.1", "--dashboard", "localhost"])
        let broker = try await MosquittoBroker.start()
        let port = try FreePort.next()
        let users = try await Users.make(in: directory, [Users.anna])
        let dashboard = try await DashboardMesh.startDashboard(
            brokerURL: broker.url, port: port, extra: users + ["--tls-cert", tls + "/dashboard.pem", "--tls-key", tls + "/dashboard.key"])
        #expect(dashboard.stdoutLines.contains { $0.contains("serving https://127.0.0.1:\(port)/") && $0.contains("sign-in required") })
        let base = "https://127.0.0.1:\(port)"
        let health = try await Curl.request(base + "/healthz", ["--cacert", tls + "/ca.pem"])
        #expect(health.exit == 0 && health.status == 200, "\(health)")
        let untrusted = try await Curl.request(base + "/healthz")
        #expect(untrusted.exit == 60, "a certificate not from a trusted CA must fail verification: \(untrusted)")
        let plain = try await Curl.request("http://127.0.0.1:\(port)/healthz", maxTime: 5)
        #expect(plain.status == 0, "plain HTTP must get no answer: \(plain)")
        let signedIn = try await Curl.request(
            base + "/login", ["--cacert", tls + "/ca.pem"] + Curl.loginForm(Users.anna.name, Users.anna.password))
        #expect(signedIn.status == 303)
        let setCookie = signedIn.header("set-cookie").first ?? ""
        #expect(setCookie.contains("; Secure") && setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"), "\(setCookie)")
        #expect(signedIn.header("strict-transport-security") == ["max-age=31536000"])
        let page = try await Curl.request(
            base + "/api/stores", ["--cacert", tls + "/ca.pem", "--cookie", try #require(signedIn.sessionCookie)])
        #expect(page.status == 200, "\(page)")
        #expect(await dashboard.stop(with: SIGTERM, timeout: .seconds(10)) == .exited(0))
        await broker.stop()
    }

    @Test(
        "refused at start, exit 2 with one line: a non-loopback --listen without --users, half of the TLS pair, a bad users file",
        arguments: [
            (["--listen", "0.0.0.0:8080"], "--users"),
            (["--listen", "192.168.1.10:8080"], "--users"),
            (["--listen", "[::]:8080"], "--users"),
            (["--tls-cert", "/nonexistent.pem"], "--tls-key"),
            (["--users", "/nonexistent/users.yaml"], "/nonexistent/users.yaml"),
        ])
    func refusals(arguments: [String], naming: String) async throws {
        let process = try Mesh.program("beacon-dashboard", ["--broker", "mqtt://127.0.0.1:1"] + arguments)
        #expect(await process.waitForExit(timeout: .seconds(10)) == .exited(2), "\(process.transcript)")
        let errors = process.stderrLines.filter { !$0.isEmpty }
        #expect(errors.count == 1 && errors.first?.hasPrefix("beacon-dashboard: ") == true, "\(errors)")
        #expect(errors.first?.contains(naming) == true, "\(errors)")
        #expect(process.stdoutLines.allSatisfy { !$0.contains("serving") })
    }

    @Test("users add: the password from standard input becomes a bcrypt hash in a 0600 file; a short one is refused")
    func usersAdd() async throws {
        let directory = try Mesh.temporaryDirectory()
        let file = directory + "/users.yaml"
        let added = try Users.add("anna", password: "anna-store-1-pass", stores: "1,2", file: file)
        #expect(await added.waitForExit(timeout: .seconds(30)) == .exited(0), "\(added.transcript)")
        #expect(added.stdoutLines.contains { $0.hasPrefix("anna: added in \(file) (stores: 1,2)") }, "\(added.transcript)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("- name: \"anna\"") && text.contains("passwordHash: \"$2b$12$") && text.contains("stores: [1, 2]"), "\(text)")
        #expect(!text.contains("anna-store-1-pass"))
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        let short = try Users.add("bert", password: "short", stores: "all", file: file)
        #expect(await short.waitForExit(timeout: .seconds(30)) == .exited(2))
        #expect(short.stderrLines.filter { !$0.isEmpty } == ["beacon-dashboard: the password is shorter than 8 characters"])
        #expect(!(try String(contentsOfFile: file, encoding: .utf8)).contains("bert"))
    }
    @Test("users add on a terminal: asks twice with echo off, the password never shows; two different answers change nothing")
    func usersAddAtATerminal() async throws {
        let directory = try Mesh.temporaryDirectory()
        let file = directory + "/users.yaml"
        let program = ScreenText.shellQuoted(try BuiltProducts.path(of: "beacon-dashboard"))
        for (answers, status) in [(["typed-secret-1", "typed-secret-1"], 0), (["typed-secret-2", "typed-secret-3"], 2)] {
            let name = status == 0 ? "anna" : "bert"
            let tmux = try await TmuxSession(
                socket: "beaconmesh-users-add-\(name)", columns: 100, rows: 12,
                command: "\(program) users add \(name) --stores 1 --file \(ScreenText.shellQuoted(file)); echo \"exit=$?\"; sleep 60")
            do {
                try await tmux.waitForScreen("the first question") { $0.contains("Password for \(name):") }
                try await tmux.sendKeys("-l", answers[0])
                try await tmux.sendKeys("Enter")
                try await tmux.waitForScreen("the second question") { $0.contains("Once more:") }
                try await tmux.sendKeys("-l", answers[1])
                try await tmux.sendKeys("Enter")
                let screen = try await tmux.waitForScreen("the exit status", timeout: .seconds(20)) { $0.contains("exit=") }
                #expect(screen.contains("exit=\(status)"), "\(screen)")
                #expect(!answers.contains { screen.contains($0) }, "the password showed on the terminal:\n\(screen)")
                if status != 0 { #expect(screen.contains("the two passwords differ; nothing was changed"), "\(screen)") }
            } catch {
                await tmux.kill()
                throw error
            }
            await tmux.kill()
        }
        let users = try String(contentsOfFile: file, encoding: .utf8)
        #expect(users.contains("- name: \"anna\"") && !users.contains("bert") && !users.contains("typed-secret"), "\(users)")
    }
}
