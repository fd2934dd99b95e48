import BeaconMeshTesting
import Foundation
import Testing

/// `/api/openapi.json` held to the dashboard's answers: schemathesis (PyPI, installed by deploy/install-schemathesis.sh)
/// generates requests for every JSON route it describes — valid and hostile store numbers, periods and query strings —
/// against a running dashboard with a store heard and its history (`--db`), and checks every answer: no 5xx, each
/// status, content type and body as the document says.
@Suite("The dashboard's OpenAPI document", .serialized)
struct DashboardOpenAPITests {
    @Test("schemathesis finds no server error and no answer off the document, on every JSON route")
    func schemathesis() async throws {
        let st = BuiltProducts.packageRoot.appendingPathComponent(".build/schemathesis/bin/st").path
        guard FileManager.default.isExecutableFile(atPath: st) else {
            Issue.record("schemathesis is missing: run deploy/install-schemathesis.sh (deploy/run-tests.sh does)")
            return
        }
        try await DashboardMesh.run(prepare: { directory in ["--db", directory + "/mesh.sqlite"] }) { mesh in
            try await mesh.shoppers.nodeStatus(department: 10, online: true)
            mesh.shoppers.place(1, in: 10)
            let heard = await eventually(timeout: .seconds(15), interval: .milliseconds(100)) { () -> Bool? in
                (try? await HTTP.get(mesh.dashboardURL + "/api/stores/1/presence"))?.status == 200 ? true : nil
            }
            #expect(heard == true, "store 1's snapshot never reached the dashboard")
            let document = try await HTTP.get(mesh.dashboardURL + "/api/openapi.json")
            let paths = (try JSONSerialization.jsonObject(with: Data(document.body.utf8)) as? [String: Any])?["paths"] as? [String: Any]
            #expect(
                Set(paths?.keys.map { $0 } ?? []) == [
                    "/api/stores", "/api/stores/{store}", "/api/stores/{store}/presence", "/api/stores/{store}/nodes",
                    "/api/stores/{store}/analytics",
                    "/api/stores/{store}/survey", "/api/stores/{store}/survey/marks", "/healthz", "/api/openapi.json",
                ])
            let run = try TestProcess(
                executable: st,
                arguments: [
                    "run", mesh.dashboardURL + "/api/openapi.json", "--checks",
                    "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
                    "--phases", "examples,coverage,fuzzing", "--max-examples", "200", "--workers", "1", "--seed", "25",
                ], environment: ["NO_COLOR": "1", "PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()])
            let status = await run.waitForExit(timeout: .seconds(300))
            // Its report stays beside the other end-to-end artefacts.
            try run.stdoutLines.joined(separator: "\n").write(
                toFile: try DashboardBrowserTests.screenshotPath("schemathesis.txt"), atomically: true, encoding: .utf8)
            #expect(status == .exited(0), "schemathesis found problems:\n\(run.stdoutLines.suffix(80).joined(separator: "\n"))")
            #expect(mesh.dashboard.isRunning, "the dashboard did not survive: \(mesh.dashboard.transcript)")
        }
    }
}
