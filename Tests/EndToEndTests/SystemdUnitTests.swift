import BeaconMeshTesting
import Foundation
import Testing

/// The shipped systemd units: `systemd-analyze verify` accepts them, and they keep their security promises.
@Suite("systemd units")
struct SystemdUnitTests {
    /// The programs that run all the time.
    static let daemons = ["beacon-scanner@.service", "beacon-coordinator.service", "beacon-dashboard.service"]
    static let units = daemons + ["beaconmesh-registry-purge.service", "beaconmesh-registry-purge.timer"]

    static func text(of unit: String) throws -> String {
        try String(contentsOf: BuiltProducts.packageRoot.appendingPathComponent("deploy/systemd/\(unit)"), encoding: .utf8)
    }

    /// The `Key=value` settings of a unit, in order (comments and section headers left out).
    static func settings(of unit: String) throws -> [(key: String, value: String)] {
        try text(of: unit).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    static func value(_ key: String, in unit: String) throws -> String? {
        try settings(of: unit).last { $0.key == key }?.value
    }

    @Test("systemd-analyze verify passes on every unit (ExecStart pointed at the built programs)")
    func verify() async throws {
        let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let tool = try #require(analyze, "systemd-analyze was not found; install systemd (apt-get install systemd)")
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // verify checks that ExecStart's program exists; the units name /usr/local/bin, where install.sh puts them.
        _ = try BuiltProducts.path(of: "beacon-scanner")
        _ = try BuiltProducts.path(of: "beacon-coordinator")
        _ = try BuiltProducts.path(of: "beacon-dashboard")
        for unit in Self.units {
            let text = try Self.text(of: unit).replacingOccurrences(of: "/usr/local/bin/", with: BuiltProducts.directory + "/")
            try text.write(toFile: directory + "/" + unit, atomically: true, encoding: .utf8)
        }
        let process = try TestProcess(
            executable: tool, arguments: ["verify"] + Self.units.map { directory + "/" + $0 },
            environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "SYSTEMD_LOG_COLOR": "0"])
        let status = await process.waitForExit(timeout: .seconds(60))
        #expect(status == .exited(0), "\(process.transcript)")
        #expect(process.stderrLines.filter { !$0.isEmpty }.isEmpty, "no warnings either:\n\(process.transcript)")
    }

    @Test("the scanner unit runs the instance's config file as the beaconmesh user with only the radio capabilities")
    func scannerUnit() throws {
        let unit = "beacon-scanner@.service"
        #expect(try Self.value("ExecStart", in: unit) == "/usr/local/bin/beacon-scanner --config /etc/beaconmesh/scanner/%i.yaml")
        #expect(try Self.value("AmbientCapabilities", in: unit) == "CAP_NET_RAW CAP_NET_ADMIN")
        #expect(try Self.value("CapabilityBoundingSet", in: unit) == "CAP_NET_RAW CAP_NET_ADMIN")
        #expect(try Self.value("RestrictAddressFamilies", in: unit)?.contains("AF_BLUETOOTH") == true)
    }

    @Test("the coordinator unit has no capabilities and writes only its state directory")
    func coordinatorUnit() throws {
        let unit = "beacon-coordinator.service"
        #expect(try Self.value("ExecStart", in: unit) == "/usr/local/bin/beacon-coordinator run --config /etc/beaconmesh/coordinator.yaml")
        #expect(try Self.value("AmbientCapabilities", in: unit) == "")
        #expect(try Self.value("CapabilityBoundingSet", in: unit) == "")
        #expect(try Self.value("StateDirectory", in: unit) == "beaconmesh")
        #expect(try Self.value("WorkingDirectory", in: unit) == "/var/lib/beaconmesh")
    }

    @Test(
        "the dashboard unit signs people in (--users), serves HTTPS, reads the broker with its read-only credential, has no capabilities and writes nothing"
    )
    func dashboardUnit() throws {
        let unit = "beacon-dashboard.service"
        let exec = try #require(try Self.value("ExecStart", in: unit))
        #expect(exec.hasPrefix("/usr/local/bin/beacon-dashboard "))
        for flag in [
            "--users /etc/beaconmesh/dashboard-users.yaml", "--tls-cert /etc/beaconmesh/tls/dashboard.pem",
            "--tls-key /etc/beaconmesh/tls/dashboard.key", "--username dashboard-hq",
            "--password-file /etc/beaconmesh/credentials/dashboard-hq.pass", "--cafile /etc/beaconmesh/tls/ca.pem",
        ] {
            #expect(exec.contains(flag), "ExecStart lacks \(flag)")
        }
        #expect(try Self.value("AmbientCapabilities", in: unit) == "")
        #expect(try Self.value("CapabilityBoundingSet", in: unit) == "")
        #expect(try Self.value("StateDirectory", in: unit) == nil, "the dashboard keeps no state")
        #expect(try Self.value("ConditionPathExists", in: unit) == "/etc/beaconmesh/dashboard-users.yaml", "never starts without users")
    }

    @Test("every program that runs all the time restarts on failure (not on a bad config), runs as a dedicated user and is hardened")
    func hardening() throws {
        for unit in Self.daemons {
            let expected = [
                "User": "beaconmesh", "Group": "beaconmesh", "Restart": "on-failure", "RestartPreventExitStatus": "2",
                "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
                "PrivateDevices": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
                "ProtectControlGroups": "yes", "RestrictNamespaces": "yes", "RestrictSUIDSGID": "yes",
                "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "SystemCallFilter": "@system-service",
                "UMask": "0077", "KillSignal": "SIGTERM",
            ]
            for (key, value) in expected {
                #expect(try Self.value(key, in: unit) == value, "\(unit): \(key)")
            }
        }
    }

    @Test("the registry purge runs hourly as the beaconmesh user, hardened, with the owner's URL and password from a file only it reads")
    func purgeUnit() throws {
        let unit = "beaconmesh-registry-purge.service"
        #expect(try Self.value("Type", in: unit) == "oneshot")
        #expect(try Self.value("ExecStart", in: unit) == "/usr/local/bin/beacon-coordinator members purge --db ${BEACONMESH_REGISTRY_URL}")
        #expect(try Self.value("EnvironmentFile", in: unit) == "/etc/beaconmesh/credentials/registry-owner.env")
        for (key, value) in [
            "User": "beaconmesh", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "CapabilityBoundingSet": "",
            "SystemCallFilter": "@system-service", "UMask": "0077",
        ] {
            #expect(try Self.value(key, in: unit) == value, "\(unit): \(key)")
        }
        #expect(try Self.value("OnUnitActiveSec", in: "beaconmesh-registry-purge.timer") == "1h")
    }
}
