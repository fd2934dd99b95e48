import Foundation

/// A real headless Chromium for one test, driven over the W3C WebDriver protocol through `chromedriver` on a free
/// loopback port (Debian's `chromium` and `chromium-driver`; `deploy/install-deps.sh` installs them). A missing
/// browser or driver fails the test with what to install; it is never a skip. `quit()` ends the session and the driver.
public final class Browser {
    public let driver: TestProcess
    public let port: Int
    public let session: String

    /// Where Debian puts the two programs.
    public static let chromium = "/usr/bin/chromium"
    public static let chromedriver = "/usr/bin/chromedriver"

    private init(driver: TestProcess, port: Int, session: String) {
        self.driver = driver
        self.port = port
        self.session = session
    }

    /// Starts chromedriver and a headless Chromium with a `width` × `height` window; console messages are kept.
    public static func start(width: Int = 1280, height: Int = 860) async throws -> Browser {
        for program in [chromium, chromedriver] where !FileManager.default.isExecutableFile(atPath: program) {
            throw TestSupportError("\(program) is missing: run deploy/install-deps.sh (apt-get install chromium chromium-driver)")
        }
        let port = try FreePort.next()
        let driver = try TestProcess(executable: chromedriver, arguments: ["--port=\(port)"])
        guard await eventually(timeout: .seconds(30), { FreePort.isListening(port: port, processID: driver.processID) }) else {
            throw TestSupportError("chromedriver did not start: \(driver.transcript)")
        }
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": chromium,
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=\(width),\(height)", "--hide-scrollbars", "--lang=en-GB",
                        ],
                    ],
                    "goog:loggingPrefs": ["browser": "ALL"],
                ] as [String: Any]
            ]
        ]
        let reply = try await request("POST", port: port, path: "/session", body: capabilities, timeout: 60)
        guard let value = reply as? [String: Any], let session = value["sessionId"] as? String else {
            throw TestSupportError("chromedriver gave no session: \(String(describing: reply)); \(driver.transcript)")
        }
        return Browser(driver: driver, port: port, session: session)
    }

    /// Loads `url` and waits for the page's load event.
    public func open(_ url: String) async throws {
        _ = try await call("POST", "/url", ["url": url])
    }

    /// Runs `script` (a function body; `arguments[0]`… are `args`) in the page and returns its JSON result.
    public func evaluate(_ script: String, _ args: [Any] = []) async throws -> Any? {
        let value = try await call("POST", "/execute/sync", ["script": script, "args": args])
        return value is NSNull ? nil : value
    }

    /// Evaluates `script` every 50 ms until it returns something other than null/false; that value, or `nil` after `timeout`.
    public func waitFor(_ script: String, _ args: [Any] = [], timeout: Duration = .seconds(10)) async throws -> Any? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try await evaluate(script, args), (value as? Bool) != false { return value }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// Fills the dashboard's sign-in form the browser was sent to and submits it; throws when no form came.
    public func signIn(name: String, password: String) async throws {
        guard try await waitFor("return !!document.getElementById('login');", timeout: .seconds(10)) != nil else {
            throw TestSupportError("the browser was not sent to /login")
        }
        _ = try await evaluate(
            """
            document.getElementById('name').value = arguments[0];
            document.getElementById('password').value = arguments[1];
            document.getElementById('sign-in').click(); return true;
            """, [name, password])
    }

    /// Resizes the window (a phone: 390 × 844; a wall display: 1920 × 1080) and returns once the page has drawn two
    /// frames at the new size (`settled()`): its resize handlers have run and its layout is the new one.
    public func resize(width: Int, height: Int) async throws {
        _ = try await call("POST", "/window/rect", ["width": width, "height": height])
        try await settled()
    }

    /// Returns once the page's fonts and images have loaded and it has drawn two more frames: what a screenshot
    /// taken now shows is what the page shows (a frame's resize and scroll handlers run before its paint).
    public func settled() async throws {
        let script = """
            var done = arguments[arguments.length - 1];
            document.fonts.ready.then(function () {
              var images = Array.prototype.filter.call(document.images, function (image) { return !image.complete; });
              return Promise.all(images.map(function (image) {
                return new Promise(function (loaded) { image.addEventListener('load', loaded); image.addEventListener('error', loaded); });
              }));
            }).then(function () {
              requestAnimationFrame(function () { requestAnimationFrame(function () { done(true); }); });
            });
            """
        _ = try await call("POST", "/execute/async", ["script": script, "args": [Any]()])
    }

    /// A PNG of the window as it is now.
    public func screenshot() async throws -> Data {
        guard let base64 = try await call("GET", "/screenshot", nil) as? String, let data = Data(base64Encoded: base64) else {
            throw TestSupportError("chromedriver returned no screenshot")
        }
        return data
    }

    /// The browser console's messages since the last call, as `LEVEL message` lines (`SEVERE` are errors).
    public func consoleMessages() async throws -> [String] {
        let entries = try await call("POST", "/se/log", ["type": "browser"]) as? [[String: Any]] ?? []
        return entries.map { "\($0["level"] as? String ?? "?") \($0["message"] as? String ?? "")" }
    }

    /// Ends the session (closing Chromium) and stops chromedriver.
    public func quit() async {
        _ = try? await call("DELETE", "", nil)
        _ = await driver.stop(with: SIGTERM, timeout: .seconds(5))
    }

    private func call(_ method: String, _ path: String, _ body: [String: Any]?) async throws -> Any {
        try await Self.request(method, port: port, path: "/session/\(session)\(path)", body: body, timeout: 30)
    }

    /// One WebDriver request; a WebDriver error (a `value` with `error`) is thrown with its message.
    private static func request(_ method: String, port: Int, path: String, body: [String: Any]?, timeout: Int) async throws -> Any {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let reply = try await LoopbackHTTP.request(method, port: port, path: path, body: data, timeout: .seconds(timeout))
        let object = try JSONSerialization.jsonObject(with: reply.body, options: [.fragmentsAllowed]) as? [String: Any] ?? [:]
        let value = object["value"] ?? NSNull()
        if let error = value as? [String: Any], let kind = error["error"] as? String {
            throw TestSupportError("WebDriver \(method) \(path): \(kind): \(error["message"] as? String ?? "")")
        }
        return value
    }
}
