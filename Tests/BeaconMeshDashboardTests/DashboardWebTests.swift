import BeaconMeshTesting
import Foundation
import Testing

@testable import BeaconMeshDashboard

@Suite("the dashboard's web files")
struct DashboardWebTests {
    private static let web = BuiltProducts.packageRoot.appendingPathComponent("Sources/BeaconMeshDashboard/Web")

    private static func file(_ name: String) throws -> String {
        try String(contentsOf: web.appendingPathComponent(name), encoding: .utf8)
    }

    @Test("the program serves the files of Web/ as they are, compiled in")
    func servedAsTheFiles() throws {
        #expect(DashboardScript.text == (try Self.file("dashboard.js")))
        #expect(DashboardStylesheet.text == (try Self.file("dashboard.css")))
        #expect(DashboardPage.overview() == (try Self.file("overview.html")).replacingOccurrences(of: "{{account}}", with: ""))
        #expect(DashboardWeb.surveyScript == (try Self.file("survey.js")))
        #expect(
            DashboardPage.survey(3)
                == (try Self.file("survey.html")).replacingOccurrences(of: "{{account}}", with: "").replacingOccurrences(
                    of: "{{store}}", with: "3"))
    }

    @Test("a page's placeholders are filled once: a value that looks like a placeholder stays as it is")
    func placeholders() {
        #expect(DashboardWeb.fill("a {{x}} b {{y}} {{z}} {{", ["x": "{{y}}", "y": "<i>"]) == "a {{y}} b <i> {{z}} {{")
        let page = DashboardPage.store(7, signedInAs: "{{store}} & <b>")
        #expect(page.contains(#"<body data-page="store" data-store="7" class="connecting">"#))
        #expect(page.contains("Signed in as {{store}} &amp; &lt;b&gt;</span>"))
        #expect(!LoginPage.html(next: "/").contains("{{"))
    }

    @Test("the linter of the test command passes the files, and fails a copy with an error in its HTML, CSS or script")
    func linter() async throws {
        let python = BuiltProducts.packageRoot.appendingPathComponent(".build/weblint/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("the web linter is missing: run deploy/install-weblint.sh (deploy/run-tests.sh does)")
            return
        }
        let script = BuiltProducts.packageRoot.appendingPathComponent("deploy/lint-web.py").path
        func lint(_ paths: [String]) async throws -> (status: TestProcess.ExitStatus?, output: String) {
            let run = try TestProcess(executable: python, arguments: [script] + paths)
            let status = await run.waitForExit(timeout: .seconds(60))
            return (status, run.stdoutLines.joined(separator: "\n"))
        }
        let clean = try await lint([])
        #expect(clean.status == .exited(0), "\(clean.output)")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("weblint-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let broken = [
            ("dashboard.js", "function serverNow() {", "function serverNow() {{"),
            ("dashboard.css", "a { color: var(--accent); }", "a { color var(--accent); }"),
            ("store.html", "</header>", "</header"),
        ]
        for (name, good, bad) in broken {
            let text = try Self.file(name)
            #expect(text.contains(good), "\(name) no longer has \(good)")
            let path = folder + "/" + name
            try text.replacingOccurrences(of: good, with: bad).write(toFile: path, atomically: true, encoding: .utf8)
            let result = try await lint([path])
            #expect(result.status == .exited(1), "\(name): \(result.output)")
            #expect(result.output.hasPrefix(path + ":"), "\(name): \(result.output)")
        }
    }
}
