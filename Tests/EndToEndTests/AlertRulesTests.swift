import BeaconMeshTesting
import Foundation
import Testing

/// deploy/prometheus as Prometheus itself reads it: `promtool` (Debian's `prometheus`, installed by
/// deploy/install-deps.sh tests) checks the scrape example and runs the alert rules' unit tests
/// (`beaconmesh-alerts.test.yml`: each alert fires when it should and not before, with its labels and text).
@Suite("Prometheus example and alert rules")
struct AlertRulesTests {
    static func promtool(_ arguments: [String]) async throws -> TestProcess {
        let path = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else { throw TestSupportError("promtool is missing: run deploy/install-deps.sh tests (apt-get install prometheus)") }
        let folder = BuiltProducts.packageRoot.appendingPathComponent("deploy/prometheus").path
        let process = try TestProcess(executable: path, arguments: arguments, currentDirectory: folder)
        _ = await process.waitForExit(timeout: .seconds(60))
        return process
    }

    @Test("the scrape example and its rule file are valid")
    func configIsValid() async throws {
        let process = try await Self.promtool(["check", "config", "prometheus.yml"])
        #expect(process.exitStatus == .exited(0), "\(process.transcript)")
    }

    @Test(
        "the alert rules pass their unit tests: coordinator down, node offline 5 min, store silent in opening hours, drops rising, no batches"
    )
    func alertsFireAsTested() async throws {
        let process = try await Self.promtool(["test", "rules", "beaconmesh-alerts.test.yml"])
        #expect(process.exitStatus == .exited(0), "\(process.transcript)")
        #expect(process.stdoutLines.contains { $0.contains("SUCCESS") } || process.stderrLines.contains { $0.contains("SUCCESS") })
    }
}
