import BeaconMeshTesting
import Foundation
import Testing

/// The README's first command on a fresh checkout (issue 37): `deploy/run-mesh.sh` in a copy of the repository's
/// files, with no `.mesh` yet, serves the dashboard on its very first run (it once said "The dashboard did not
/// start": the coordinator and the dashboard migrated the new database at the same moment).
@Suite("deploy/run-mesh.sh on a fresh checkout")
struct RunMeshFirstRunTests {
    @Test(
        "the first run of deploy/run-mesh.sh in a fresh copy of the repository serves the dashboard and the store's analytics from the new database"
    )
    func firstRunServesTheDashboard() async throws {
        let checkout = try await Self.freshCopy()
        defer { try? FileManager.default.removeItem(atPath: checkout) }
        #expect(!FileManager.default.fileExists(atPath: checkout + "/.mesh"))
        let port = try FreePort.next()
        var environment = ProcessInfo.processInfo.environment
        environment["BEACONMESH_BIN"] = BuiltProducts.directory
        environment["BEACONMESH_RUN_FOR"] = "25"
        environment["BEACONMESH_DASHBOARD"] = "127.0.0.1:\(port)"
        let mesh = try TestProcess(executable: checkout + "/deploy/run-mesh.sh", environment: environment)
        let started = await mesh.waitForLine(in: .stderr, timeout: .seconds(60)) {
            $0.hasPrefix("Dashboard: http://") || $0.hasPrefix("The dashboard did not start")
        }
        let dashboardLog = (try? String(contentsOfFile: checkout + "/.mesh/dashboard.log", encoding: .utf8)) ?? ""
        #expect(started?.hasPrefix("Dashboard: http://127.0.0.1:\(port)/") == true, "\(mesh.transcript)\ndashboard log:\n\(dashboardLog)")
        // The page names the store once the dashboard has the coordinator's first snapshot (both start together, and
        // once, on a loaded machine, the page was asked for first: "Store 1 analytics").
        var last = ""
        let named = await eventually(timeout: .seconds(20), interval: .milliseconds(250)) { () async -> Bool in
            guard let page = try? await LoopbackHTTP.request("GET", port: port, path: "/stores/1/analytics", timeout: .seconds(20))
            else { return false }
            last = "\(page.status): \(String(decoding: page.body.prefix(300), as: UTF8.self))"
            return page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("San Francisco")
        }
        #expect(named, "\(last)")
        // The monitor (plain, not a terminal) prints the store's events: the simulated shoppers arrive.
        let arrival = await mesh.waitForLine(in: .stdout, timeout: .seconds(30)) { $0.contains("arrived") }
        #expect(arrival != nil, "\(mesh.transcript)")
        #expect(await mesh.waitForExit(timeout: .seconds(60)) == .exited(0), "\(mesh.transcript)")
        #expect(FileManager.default.fileExists(atPath: checkout + "/.mesh/beaconmesh.sqlite"))
    }

    /// The repository's tracked files (as they are in the working tree) copied to a new folder: what a clone has.
    private static func freshCopy() async throws -> String {
        let root = BuiltProducts.packageRoot.path
        let target = try Mesh.temporaryDirectory()
        let listing = try TestProcess(executable: "/usr/bin/git", arguments: ["-C", root, "ls-files"])
        guard await listing.waitForExit(timeout: .seconds(30)) == .exited(0) else {
            throw TestSupportError("git ls-files failed in \(root): \(listing.transcript)")
        }
        for path in listing.stdoutLines {
            let source = root + "/" + path
            guard FileManager.default.fileExists(atPath: source) else { continue }  // deleted, not yet committed
            let destination = target + "/" + path
            try FileManager.default.createDirectory(
                atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: source, toPath: destination)
        }
        return target
    }
}
