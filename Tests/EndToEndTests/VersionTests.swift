import BeaconMeshTesting
import Foundation
import Testing

/// The contract: every program answers `--version` with its version on one line and exit 0.
@Suite("--version")
struct VersionTests {
    @Test(
        "every program prints its version on one line and exits 0",
        arguments: ["beacon-scanner", "beacon-coordinator", "beacon-dashboard", "beacon-monitor", "beacon-phone", "beacon-bench"])
    func version(program: String) async throws {
        let current = try Self.current()
        let process = try Mesh.program(program, ["--version"])
        #expect(await process.waitForExit(timeout: .seconds(10)) == .exited(0), "\(process.transcript)")
        #expect(process.stdoutLines.filter { !$0.isEmpty } == [current], "\(process.transcript)")
    }

    /// `BeaconMeshVersion.current`, read from its source file (this target does not link BeaconMeshService).
    static func current() throws -> String {
        let path = BuiltProducts.packageRoot.appendingPathComponent("Sources/BeaconMeshService/BeaconMeshVersion.swift").path
        let source = try String(contentsOfFile: path, encoding: .utf8)
        guard let line = source.split(separator: "\n").first(where: { $0.contains("static let current = ") }),
            let version = line.split(separator: "\"").dropFirst().first
        else { throw TestSupportError("no version in \(path)") }
        return String(version)
    }
}
