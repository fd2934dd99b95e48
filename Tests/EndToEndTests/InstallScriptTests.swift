import BeaconMeshTesting
import Foundation
import Testing

/// `deploy/install.sh`, staged into a temp folder (`DESTDIR`) with the already built programs, and in `--dry-run`.
@Suite("install script", .serialized)
struct InstallScriptTests {
    /// Runs install.sh with `arguments` and `DESTDIR=destdir`; returns its standard output lines.
    func install(_ arguments: [String], destdir: String) async throws -> [String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DESTDIR"] = destdir
        let process = try await RepositoryScript.run("deploy/install.sh", arguments, environment: environment)
        return process.stdoutLines
    }

    func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int
    }

    @Test("staged into DESTDIR: programs, units, example configs, folders and docs land where the guide says")
    func staged() async throws {
        let root = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let output = try await install(["--bin", BuiltProducts.directory, "--broker"], destdir: root)
        for program in ["beacon-scanner", "beacon-coordinator", "beacon-monitor", "beacon-dashboard"] {
            #expect(mode(root + "/usr/local/bin/" + program) == 0o755, "\(program)")
        }
        for file in [
            "/etc/systemd/system/beacon-scanner@.service", "/etc/systemd/system/beacon-coordinator.service",
            "/etc/systemd/system/beacon-dashboard.service", "/etc/systemd/system/beaconmesh-registry-purge.timer",
            "/etc/beaconmesh/examples/scanner.yaml", "/etc/beaconmesh/examples/coordinator.yaml",
            "/etc/beaconmesh/examples/store-bridge.conf", "/etc/mosquitto/mosquitto.conf",
            "/usr/local/share/doc/beaconmesh/README.md", "/usr/local/share/doc/beaconmesh/deployment.md",
        ] {
            #expect(FileManager.default.fileExists(atPath: root + file), "\(file) missing")
        }
        #expect(mode(root + "/etc/beaconmesh/coordinator.yaml") == 0o640)
        #expect(mode(root + "/etc/beaconmesh/credentials") == 0o711)
        #expect(FileManager.default.fileExists(atPath: root + "/etc/beaconmesh/scanner"))
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/beacon-scanner@.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/beacon-scanner --config /etc/beaconmesh/scanner/%i.yaml"))
        // Nothing outside DESTDIR: no user made, no systemctl.
        #expect(output.contains { $0.hasPrefix("skipped (DESTDIR is set): useradd") } || output.allSatisfy { !$0.contains("useradd") })
        #expect(output.contains("skipped (DESTDIR is set): systemctl daemon-reload"), "\(output)")
        #expect(output.contains { $0.contains("What to edit next") })
        #expect(output.contains { $0.contains("systemctl enable --now beacon-scanner@dept10") })

        // Again, after the user edited their config: the programs are replaced, the config is kept.
        try "# edited\n".write(toFile: root + "/etc/beaconmesh/coordinator.yaml", atomically: true, encoding: .utf8)
        let again = try await install(["--bin", BuiltProducts.directory], destdir: root)
        #expect(again.contains { $0.hasPrefix("kept ") && $0.hasSuffix("/etc/beaconmesh/coordinator.yaml (exists)") }, "\(again)")
        #expect(try String(contentsOfFile: root + "/etc/beaconmesh/coordinator.yaml", encoding: .utf8) == "# edited\n")
    }

    @Test("--prefix moves the programs and the units' ExecStart with them")
    func prefix() async throws {
        let root = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try await install(["--bin", BuiltProducts.directory, "--prefix", "/opt/beaconmesh"], destdir: root)
        #expect(FileManager.default.isExecutableFile(atPath: root + "/opt/beaconmesh/bin/beacon-coordinator"))
        let unit = try String(contentsOfFile: root + "/etc/systemd/system/beacon-coordinator.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/opt/beaconmesh/bin/beacon-coordinator run --config /etc/beaconmesh/coordinator.yaml"))
    }

    @Test("--dry-run says it would build release binaries, make the user and reload systemd, and changes nothing")
    func dryRun() async throws {
        let root = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var environment = ProcessInfo.processInfo.environment
        environment["DESTDIR"] = nil
        let process = try await RepositoryScript.run("deploy/install.sh", ["--dry-run"], environment: environment)
        let output = process.stdoutLines
        #expect(
            output.contains {
                $0.hasPrefix("would run: swift build") && $0.contains("-c release") && $0.contains("--product beacon-scanner")
            }, "\(output)")
        #expect(output.contains { $0.hasPrefix("would run: install -D -m 755") && $0.hasSuffix("/usr/local/bin/beacon-coordinator") })
        #expect(output.contains("would install /etc/systemd/system/beacon-scanner@.service (ExecStart in /usr/local/bin)"))
        #expect(output.contains("would run: systemctl daemon-reload"))
        // Staged dry run: the folder stays empty.
        _ = try await install(["--dry-run", "--bin", BuiltProducts.directory, "--broker"], destdir: root)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).isEmpty)
    }

    @Test("the example coordinator config is valid: the coordinator's only complaint is the CA or credential file not yet on this machine")
    func exampleCoordinatorConfig() async throws {
        let example = BuiltProducts.packageRoot.appendingPathComponent("deploy/examples/coordinator.yaml").path
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", example])
        #expect(await coordinator.waitForExit(timeout: .seconds(15)) == .exited(2))
        let errors = coordinator.stderrLines.filter { !$0.isEmpty }
        let complaint = errors.first ?? ""
        #expect(errors.count == 1, "\(errors)")
        #expect(
            complaint.contains("cannot read the CA file /etc/beaconmesh/tls/ca.pem")
                || complaint.contains("password file /etc/beaconmesh/credentials/coordinator-backoffice-1.pass"), "\(errors)")
    }
}
