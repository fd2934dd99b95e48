import BeaconMeshTesting
import Foundation
import Testing

/// libbluetooth is GPL-2+: only the scanner, which needs the radio, may link it (STYLE: "check with ldd").
@Suite("which programs link libbluetooth")
struct LicenceLinkingTests {
    @Test(
        "only beacon-scanner links libbluetooth",
        arguments: [
            ("beacon-scanner", true), ("beacon-coordinator", false), ("beacon-monitor", false), ("beacon-dashboard", false),
            ("beacon-phone", false),
        ])
    func bluetoothLinking(program: String, links: Bool) async throws {
        let ldd = try TestProcess(executable: "/usr/bin/env", arguments: ["ldd", try BuiltProducts.path(of: program)])
        #expect(await ldd.waitForExit() == .exited(0), "\(ldd.transcript)")
        let linked = ldd.stdoutLines.contains { $0.contains("libbluetooth") }
        #expect(linked == links, "\(program): \(ldd.stdoutLines.joined(separator: "\n"))")
    }
}
