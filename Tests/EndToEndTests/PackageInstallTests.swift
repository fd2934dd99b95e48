import BeaconMeshTesting
import Foundation
import Testing

/// The Debian packages (deploy/package.sh), installed the way a store's IT would: `apt install ./FILE.deb` into a
/// pristine Debian 12 made with debootstrap (deploy/test-packages.sh does the chroot work and reports what it saw).
///
/// The packages come from `BEACONMESH_PACKAGES=DIR` and the upgrade's (the same with the version `<version>+upgrade`)
/// from `BEACONMESH_PACKAGES_UPGRADE=DIR` when set (run-tests.sh builds them beside the tests), else this test builds
/// them (a release build, many minutes). Needs root (debootstrap, chroot).
@Suite("Debian packages in a pristine Debian", .serialized, .enabled(if: getuid() == 0, "debootstrap and chroot need root"))
struct PackageInstallTests {
    /// Runs a repository script with bash and waits up to `timeout`; throws with its output unless it exits 0.
    @discardableResult
    static func script(_ script: String, _ arguments: [String], timeout: Duration) async throws -> TestProcess {
        let path = BuiltProducts.packageRoot.appendingPathComponent(script).path
        let process = try TestProcess(executable: "/bin/bash", arguments: [path] + arguments)
        let status = await process.waitForExit(timeout: timeout)
        guard status == .exited(0) else {
            if status == nil { process.send(SIGKILL) }
            let outcome = status.map { "\($0)" } ?? "did not finish"
            throw TestSupportError("\(script) \(arguments.joined(separator: " ")) \(outcome):\n\(process.transcript)")
        }
        return process
    }

    /// The one `NAME_*.deb` in `directory`.
    static func deb(_ name: String, in directory: String) throws -> String {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix(name + "_") && $0.hasSuffix(".deb")
        }
        guard files.count == 1, let file = files.first else { throw TestSupportError("not one \(name)_*.deb in \(directory): \(files)") }
        return directory + "/" + file
    }

    /// The `key: value` lines of test-packages.sh.
    static func report(of process: TestProcess) -> [String: String] {
        var report: [String: String] = [:]
        for line in process.stdoutLines {
            guard let colon = line.range(of: ": ") else { continue }
            report[String(line[..<colon.lowerBound])] = String(line[colon.upperBound...])
        }
        return report
    }

    @Test(
        "apt install ./beaconmesh-*.deb on a pristine Debian: only runtime libraries come along, --version answers, a replayed capture is greeted, the dashboard is healthy; edited configs survive an upgrade and apt remove, apt purge removes them"
    )
    func installedAsAStoresIT() async throws {
        let work = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let packages: String
        if let given = ProcessInfo.processInfo.environment["BEACONMESH_PACKAGES"], !given.isEmpty {
            packages = given
        } else {
            packages = work + "/packages"
            try await Self.script("deploy/package.sh", ["--out", packages], timeout: .seconds(3600))
        }
        let scannerDeb = try Self.deb("beaconmesh-scanner", in: packages)
        let version = try #require(URL(fileURLWithPath: scannerDeb).lastPathComponent.split(separator: "_").dropFirst().first)
        var upgrade = ProcessInfo.processInfo.environment["BEACONMESH_PACKAGES_UPGRADE"] ?? ""
        if upgrade.isEmpty {
            upgrade = work + "/upgrade"
            let arguments = ["--out", upgrade, "--package-version", "\(version)+upgrade"]
            try await Self.script("deploy/package.sh", arguments, timeout: .seconds(3600))
        }

        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        // The capture: a minute of two beacons, 100 ms apart; minor 1 is Ana's fob in the members CSV.
        try SyntheticCapture.write(to: work + "/capture.btsnoop", adverts: 120, beacons: 2, interval: .milliseconds(100))
        let config = try Mesh.writeCoordinatorConfig(in: work, brokerURL: broker.url, id: "package-test")
        let coordinatorConfig = try String(contentsOfFile: config, encoding: .utf8)
            .replacingOccurrences(of: "database: mesh.sqlite", with: "database: /var/lib/beaconmesh/beaconmesh.sqlite")
            .replacingOccurrences(of: "members: members.csv", with: "members: /var/lib/beaconmesh/members.csv")
        try coordinatorConfig.write(toFile: config, atomically: true, encoding: .utf8)
        let scannerConfig = """
            # Edited by the store's IT: department 10 of store 1, replaying a capture (no radio in a chroot).
            store: 1
            department: 10
            node: a
            source: btsnoop:/var/lib/beaconmesh-capture.btsnoop
            speed: 1
            broker: \(broker.url)
            flush: 500ms

            """
        try scannerConfig.write(toFile: work + "/scanner.yaml", atomically: true, encoding: .utf8)
        let events = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/1/events", qos: 1)

        let dashboardPort = try FreePort.next()
        let run = try await Self.script(
            "deploy/test-packages.sh",
            [
                "--packages", packages, "--upgrade", upgrade, "--work", work, "--broker-port", "\(broker.port)",
                "--dashboard-port", "\(dashboardPort)", "--broker-directory", broker.directory,
            ], timeout: .seconds(1800))
        let report = Self.report(of: run)
        let transcript = run.stdoutLines.joined(separator: "\n")
        print(transcript)

        #expect(report["lintian-errors"] == "0", "lintian: \(report["lintian"] ?? transcript)")

        // Nothing but runtime libraries (and adduser, for the maintainer scripts) came along: no toolchain, no -dev
        // package, no browser, no database server.
        for role in ["scanner", "server"] {
            let added = (report["\(role)-added"] ?? "").split(separator: " ").map(String.init)
            #expect(added.contains("beaconmesh-\(role)"), "\(role): \(added)")
            let others = added.filter { $0 != "beaconmesh-\(role)" && $0 != "adduser" }
            #expect(others.allSatisfy { $0.hasPrefix("lib") && !$0.hasSuffix("-dev") }, "\(role) pulled in more than libraries: \(others)")
            #expect(!added.contains { $0.contains("swift") || $0.contains("chromium") || $0.contains("postgresql") }, "\(added)")
            #expect(report["\(role)-conffiles"] == "", "no dpkg conffile, so no question on upgrade")
            #expect(report["\(role)-user"]?.hasPrefix("beaconmesh:") == true, "\(report)")
        }
        #expect((report["scanner-added"] ?? "").contains("libbluetooth3"))
        #expect(!(report["server-added"] ?? "").contains("libbluetooth"), "only the scanner links the GPL libbluetooth")
        // The targets: a scanner package of at most 20 MB that adds at most 60 MB to a pristine Debian.
        let debBytes = try #require(report["scanner-deb-bytes"].flatMap { Int($0) }, "\(transcript)")
        #expect(debBytes <= 20_000_000, "beaconmesh-scanner is \(debBytes) bytes")
        let installedKB = try #require(report["scanner-installed-kb"].flatMap { Int($0) }, "\(transcript)")
        #expect(installedKB <= 60 * 1024, "installing beaconmesh-scanner added \(installedKB) KB")

        let current = try VersionTests.current()
        for program in ["beacon-scanner", "beacon-coordinator", "beacon-dashboard", "beacon-monitor"] {
            #expect(report["\(program)-version"] == current + "|", "\(program): \(report["\(program)-version"] ?? "nothing")")
        }
        #expect(report["scanner-config-installed"] == "node.yaml ", "\(transcript)")
        #expect(report["server-config-installed"]?.contains("coordinator.yaml") == true, "\(transcript)")

        // The node in the chroot replayed the capture; the coordinator in the other chroot greeted Ana.
        let greeting = try #require(report["greeting"].flatMap(Mesh.payload(of:)), "\(transcript)")
        #expect(greeting["greeting"] as? String == "Welcome back, Ana Souza! The usual Flat white?", "\(greeting)")
        #expect(greeting["department"] as? Int == 10)
        #expect(await events.waitForLine(timeout: .seconds(5)) { $0.contains("\"type\":\"arrived\"") } != nil, "\(events.lines)")
        await events.stop()
        #expect(report["healthz"]?.isEmpty == false && report["healthz"] != "none", "\(transcript)")

        for role in ["scanner", "server"] {
            #expect(report["\(role)-upgraded-version"] == "\(version)+upgrade", "\(transcript)")
            #expect(report["\(role)-config-after-upgrade"] == "kept", "\(transcript)")
            #expect(report["\(role)-config-after-remove"] == "kept", "\(transcript)")
            #expect(report["\(role)-etc-after-purge"] == "gone ", "\(transcript)")
            // The system user stays, as Debian leaves it, with its password locked.
            #expect(report["\(role)-user-after-purge"]?.hasPrefix("beaconmesh L") == true, "\(transcript)")
        }
        #expect(report["scanner-version-after-upgrade"] == current + "|")
        #expect(report["scanner-program-after-remove"] == "gone")
        #expect(report["server-state-after-purge"] == "gone")
    }
}
