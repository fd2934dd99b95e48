import BeaconMeshTesting
import Foundation
import Testing

/// A scanner on a host of its own — a network namespace joined to this one by a veth pair — so that the test can
/// cut the network between it and the broker the way a pulled cable or a dead access point does (no FIN, no RST).
private struct ScannerHost {
    let name: String
    let hostSide: String
    let hostAddress: String
    let nodeAddress: String

    /// Runs `ip` with `arguments`; throws with its output when it fails.
    static func ip(_ arguments: [String]) async throws {
        let process = try TestProcess(executable: "/usr/bin/env", arguments: ["ip"] + arguments)
        guard await process.waitForExit() == .exited(0) else {
            throw TestSupportError(
                "ip \(arguments.joined(separator: " ")) failed (this test makes network namespaces as root): \(process.transcript)")
        }
    }

    /// Makes the namespace and the link: this side `10.213.N.1`, the scanner's side `10.213.N.2`.
    static func make() async throws -> ScannerHost {
        let number = Int.random(in: 1...250)
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let host = ScannerHost(
            name: "bm-\(suffix)", hostSide: "bmh\(suffix)", hostAddress: "10.213.\(number).1",
            nodeAddress: "10.213.\(number).2")
        let nodeSide = "bmn\(suffix)"
        try await ip(["netns", "add", host.name])
        try await ip(["link", "add", host.hostSide, "type", "veth", "peer", "name", nodeSide])
        try await ip(["link", "set", nodeSide, "netns", host.name])
        try await ip(["addr", "add", host.hostAddress + "/30", "dev", host.hostSide])
        try await ip(["link", "set", host.hostSide, "up"])
        try await ip(["-n", host.name, "addr", "add", host.nodeAddress + "/30", "dev", nodeSide])
        try await ip(["-n", host.name, "link", "set", nodeSide, "up"])
        try await ip(["-n", host.name, "link", "set", "lo", "up"])
        return host
    }

    /// Takes the link down (`false`) or up again.
    func link(up: Bool) async throws {
        try await ScannerHost.ip(["link", "set", hostSide, up ? "up" : "down"])
    }

    /// Runs a program inside the namespace.
    func run(_ executable: String, _ arguments: [String]) throws -> TestProcess {
        try TestProcess(executable: "/usr/bin/env", arguments: ["ip", "netns", "exec", name, executable] + arguments)
    }

    func remove() async {
        try? await ScannerHost.ip(["netns", "del", name])
        try? await ScannerHost.ip(["link", "del", hostSide])
    }
}

@Suite("a network cut between a scanner and the broker", .serialized)
struct NetworkCutTests {
    @Test("link down past the keep-alive, then up: the scanner comes back online, its queued batches arrive, no seq is missing")
    func linkDownAndUp() async throws {
        let host = try await ScannerHost.make()
        let port = try FreePort.next()
        let run = try await CoordinatorRun.start(
            arguments: ["--health-interval", "1s"],
            brokerConfiguration: ["listener \(port) \(host.hostAddress)"])
        let status = try await MosquittoClients.subscribe(
            port: run.broker.port, filter: "beaconmesh/v1/stores/1/departments/30/nodes/a/status", qos: 1)
        let sightings = try await MosquittoClients.subscribe(
            port: run.broker.port, filter: "beaconmesh/v1/stores/1/departments/30/nodes/a/sightings", qos: 1,
            extraArguments: ["-c", "-i", "cut-watcher"])
        let health = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/coordinators/e2e/health")
        let scanner = try host.run(
            try BuiltProducts.path(of: "beacon-scanner"),
            [
                "--store", "1", "--department", "30", "--broker", "mqtt://\(host.hostAddress):\(port)", "--source", "sim",
                "--sim-route", "30", "--sim-outside", "0s",
            ])
        #expect(await run.waitForEvent("arrived", timeout: .seconds(15)) != nil, "\(scanner.transcript)")

        try await host.link(up: false)
        // The broker gives up on the scanner after 1.5 × its 10 s keep-alive and publishes its will.
        let offline = await status.waitForLine(timeout: .seconds(30)) { $0.contains("\"offline\"") }
        #expect(offline != nil, "\(status.lines)")
        let cutAt = sightings.lines.count
        try await Task.sleep(for: .seconds(2))
        try await host.link(up: true)

        let online = await eventually(timeout: .seconds(30), interval: .milliseconds(200)) {
            status.lines.last?.contains("\"online\"") == true && status.lines.count >= 3
        }
        #expect(online, "the scanner says online again: \(status.lines)\n\(scanner.transcript)")
        // A few batches after the reconnection, every seq of the boot has arrived once at least.
        _ = await eventually(timeout: .seconds(20)) { sightings.lines.count >= cutAt + 40 }
        let seqs = sightings.lines.compactMap { Mesh.payload(of: $0)?["seq"] as? Int }
        let missing = Set(1...(seqs.max() ?? 1)).subtracting(seqs)
        #expect(!seqs.isEmpty && missing.isEmpty, "missing seq \(missing.sorted())")
        // The coordinator counts the node again and saw no gap.
        let report = await eventually(timeout: .seconds(10)) { () -> [String: Any]? in
            guard let report = Mesh.payload(of: health.lines.last ?? ""),
                let nodes = report["nodes"] as? [[String: Any]], nodes.first?["state"] as? String == "online"
            else { return nil }
            return report
        }
        #expect(
            report?["gaps"] as? Int == 0,
            "\(String(describing: report))\n\(status.lines)\n\(run.events.lines.filter { $0.contains("\"node\"") })\n\(run.coordinator.stderrLines.suffix(15).joined(separator: "\n"))\n\(scanner.stderrLines.suffix(15).joined(separator: "\n"))"
        )
        #expect(((report?["dropped"] as? [String: Any])?["offline-node"] as? Int ?? 0) == 0, "\(String(describing: report))")

        #expect(await scanner.stop(with: SIGTERM, timeout: .seconds(15)) == .exited(0), "\(scanner.transcript)")
        for subscription in [status, sightings, health] { await subscription.stop() }
        await run.stop()
        await host.remove()
    }
}
