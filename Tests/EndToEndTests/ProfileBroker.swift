import BeaconMeshTesting
import Foundation
import Synchronization

/// A mosquitto running one of the shipped broker profiles (`deploy/broker/mosquitto-production.conf`) for one test.
///
/// A temp folder `root` stands in for `/`: the profile is copied with every `/etc/…`, `/var/…` and `/run/…` path moved
/// under it and its `listener 8883` moved to a free loopback port; the TLS files come from the real
/// `deploy/make-certificates.sh`, the credentials from the real `beacon-coordinator provision`. Killed and removed
/// when released.
final class ProfileBroker: Sendable {
    /// The folder standing in for `/`.
    let root: String
    /// The loopback port of the TLS listener.
    let port: Int
    /// `mqtts://127.0.0.1:PORT`.
    var url: String { "mqtts://127.0.0.1:\(port)" }
    var tls: String { root + "/etc/beaconmesh/tls" }
    var caFile: String { tls + "/ca.pem" }
    var passwordFile: String { root + "/etc/beaconmesh/broker/passwords" }
    var aclFile: String { root + "/etc/beaconmesh/broker/acl" }
    var credentials: String { root + "/etc/beaconmesh/credentials" }
    var pidFile: String { root + "/run/mosquitto/mosquitto.pid" }
    /// The `include_dir` of the profile (bridge fragments go here).
    var includeDirectory: String { root + "/etc/mosquitto/conf.d" }
    var configFile: String { root + "/etc/mosquitto/mosquitto.conf" }

    private let process = Mutex<TestProcess?>(nil)
    private let earlierLogs = Mutex<[String]>([])

    /// Lays out `root` with the production profile and TLS certificates for 127.0.0.1 (from a new CA, or from the
    /// CA files in `caFrom` — a chain shares one CA). Does not start the broker.
    init(caFrom: String? = nil) async throws {
        root = try Mesh.temporaryDirectory()
        port = try FreePort.next()
        for folder in ["/var/lib/mosquitto", "/run/mosquitto", "/etc/mosquitto/conf.d", "/etc/beaconmesh/broker", "/etc/beaconmesh/tls"] {
            try FileManager.default.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
        if let caFrom {
            for file in ["ca.pem", "ca.key"] {
                try FileManager.default.copyItem(atPath: caFrom + "/" + file, toPath: tls + "/" + file)
            }
        }
        try await RepositoryScript.run("deploy/make-certificates.sh", ["--out", tls, "127.0.0.1", "localhost"])
        let profile = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("deploy/broker/mosquitto-production.conf"),
            encoding: .utf8)
        var lines = try Self.rewrite(profile, root: root, port: port)
        if geteuid() == 0 { lines.append("user root") }  // else mosquitto becomes `mosquitto`, who cannot read the temp folder
        try (lines.joined(separator: "\n") + "\n").write(toFile: configFile, atomically: true, encoding: .utf8)
    }

    /// The profile's lines with paths under `root` and the TLS listener on 127.0.0.1:`port`; fails if the profile
    /// lost something a test relies on.
    static func rewrite(_ profile: String, root: String, port: Int) throws -> [String] {
        var sawListener = false
        let lines = profile.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            if line == "listener 8883" {
                sawListener = true
                return "listener \(port) 127.0.0.1"
            }
            return line.replacingOccurrences(of: " /etc/", with: " \(root)/etc/")
                .replacingOccurrences(of: " /var/", with: " \(root)/var/")
                .replacingOccurrences(of: " /run/", with: " \(root)/run/")
        }
        guard sawListener else { throw TestSupportError("deploy/broker/mosquitto-production.conf has no 'listener 8883' line") }
        return lines
    }

    /// Runs `beacon-coordinator provision ARGUMENTS` against this broker's files; returns its output lines.
    @discardableResult
    func provision(_ arguments: [String]) async throws -> [String] {
        let files = ["--passwords", passwordFile, "--acl", aclFile, "--credentials", credentials]
        let command = try Mesh.program("beacon-coordinator", ["provision"] + arguments + files)
        let status = await command.waitForExit(timeout: .seconds(20))
        guard status == .exited(0) else {
            throw TestSupportError(
                "beacon-coordinator provision \(arguments.joined(separator: " ")): \(status.map { "\($0)" } ?? "did not finish")\n\(command.transcript)"
            )
        }
        return command.stdoutLines
    }

    /// The credential file of `user`.
    func credentialFile(of user: String) -> String { credentials + "/\(user).pass" }

    /// The password `provision` drew for `user`.
    func password(of user: String) throws -> String {
        try String(contentsOfFile: credentialFile(of: user), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `mosquitto_pub`/`mosquitto_sub` arguments to log in as `user` over TLS (test-only: `-P` shows the throw-away
    /// password to `ps`, which BeaconMesh's own programs never do).
    func login(_ user: String) throws -> [String] {
        ["--cafile", caFile, "-u", user, "-P", try password(of: user)]
    }

    /// Starts mosquitto with the profile and waits until it listens on the TLS port itself (not another program there).
    func start(timeout: Duration = .seconds(30)) async throws {
        if process.withLock({ $0?.isRunning ?? false }) { return }
        let child = try TestProcess(executable: try MosquittoBroker.findExecutable(), arguments: ["-c", configFile])
        process.withLock { $0 = child }
        let ready = await eventually(timeout: timeout, interval: .milliseconds(20)) { () -> Bool? in
            guard child.isRunning else { return false }
            return FreePort.isListening(port: port, processID: child.processID) ? true : nil
        }
        guard ready == true else {
            await child.stop(with: SIGKILL, timeout: .seconds(2))
            throw TestSupportError(
                "mosquitto with the production profile did not listen on 127.0.0.1:\(port):\n\(child.transcript)")
        }
    }

    /// Stops mosquitto with SIGTERM (it saves its database) and waits until the port is free again.
    func stop() async {
        guard let child = process.withLock({ $0 }) else { return }
        await child.stop(with: SIGTERM, timeout: .seconds(10))
        earlierLogs.withLock { $0.append(child.transcript) }
        process.withLock { $0 = nil }
        _ = await eventually(timeout: .seconds(3), interval: .milliseconds(20)) { FreePort.isAccepting(port: port) ? nil : true }
    }

    /// SIGTERM, then start again on the same port with the same database.
    func restart() async throws {
        await stop()
        try await start()
    }

    /// The broker's output so far, across restarts.
    var log: String {
        (earlierLogs.withLock { $0 } + [process.withLock { $0?.transcript ?? "" }]).joined(separator: "\n")
    }

    deinit {
        if let child = process.withLock({ $0 }), child.isRunning { child.send(SIGKILL) }
        try? FileManager.default.removeItem(atPath: root)
    }
}
