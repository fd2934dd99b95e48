import BeaconMeshTesting
import Foundation
import Testing

/// A node on `mqtts://` without `--cafile` trusts the system's certificate store. libmosquitto's reconnect path
/// ignores `MOSQ_OPT_TLS_USE_OS_CERTS` (upstream issue #2820), so such a node once stayed offline after its broker's
/// first restart. Here OpenSSL's default store is the test's CA (`SSL_CERT_FILE`, as OpenSSL reads it).
@Suite("a scanner trusting the system store on mqtts:// across a broker restart", .serialized)
struct SystemTrustReconnectTests {
    static let node = "beaconmesh/v1/stores/1/departments/10/nodes/a"

    @Test("the broker restarts under a running scanner: it is online again and every queued batch arrives, seq whole")
    func reconnectsTrustingTheSystemStore() async throws {
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificates = try await TestCertificates.generate(in: directory + "/tls")
        let tlsPort = try FreePort.next()
        let broker = try MosquittoBroker(persistence: true, extraConfiguration: certificates.tlsListenerConfiguration(port: tlsPort))
        try await broker.start()
        // A persistent session on the plain listener: what the scanner sends while it is away is kept for it.
        let watch = try await MosquittoClients.subscribe(
            port: broker.port, filters: ["\(Self.node)/sightings", "\(Self.node)/status"], qos: 1,
            extraArguments: ["-c", "-i", "trust-watch"])
        var environment = ProcessInfo.processInfo.environment
        environment["SSL_CERT_FILE"] = certificates.caCertificate
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "1", "--department", "10", "--source", "sim", "--sim-route", "10", "--sim-outside", "0s", "--flush", "250ms",
                "--broker", "mqtts://127.0.0.1:\(tlsPort)",
            ], environment: environment)
        defer { scanner.send(SIGKILL) }
        func onlineCount() -> Int { watch.lines.filter { $0.hasPrefix("\(Self.node)/status ") && $0.contains("\"online\"") }.count }
        let first = await eventually(timeout: .seconds(15)) { onlineCount() >= 1 ? true : nil }
        try #require(first == true, "the scanner never came online over TLS:\n\(scanner.transcript)\n\(broker.log)")
        try await Task.sleep(for: .seconds(2))
        try await broker.restart()
        let again = await eventually(timeout: .seconds(20)) { onlineCount() >= 2 ? true : nil }
        #expect(again == true, "the scanner did not come back online after the restart:\n\(scanner.stderrLines.suffix(12))")
        try await Task.sleep(for: .seconds(2))
        #expect(await scanner.stop(with: SIGTERM, timeout: .seconds(20)) == .exited(0), "\(scanner.stderrLines.suffix(12))")
        try await Task.sleep(for: .seconds(1))
        await watch.stop()
        await broker.stop()
        let seqs = watch.lines.filter { $0.hasPrefix("\(Self.node)/sightings ") }.compactMap { Mesh.payload(of: $0)?["seq"] as? Int }
        let distinct = Set(seqs).sorted()
        #expect(!distinct.isEmpty && distinct == Array(1...(distinct.last ?? 1)), "seq not whole: \(distinct)")
    }
}
