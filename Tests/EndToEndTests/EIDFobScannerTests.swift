import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshTesting
import Foundation
import Testing

/// An Eddystone-EID fob heard by the real `beacon-scanner`: it reports the id as heard (only the coordinator knows
/// whose it is) and drops and counts EID frames of the wrong length.
@Suite("Eddystone-EID fobs through beacon-scanner")
struct EIDFobScannerTests {
    @Test(
        "a fob's EID frames replayed through beacon-scanner are sightings of eddystone-eid:<its id now>; EID frames of the wrong length are dropped and counted in health"
    )
    func fobFramesBecomeSightings() async throws {
        let fob = try #require(EddystoneEID(identityKey: Array(0x30..<0x40), rotationExponent: 10))
        let id = fob.ephemeralID(counter: UInt32(Date().timeIntervalSince1970))
        // 40 adverts 100 ms apart (4 s at --speed 1, health every second): every fourth a 13-byte EID frame.
        let reports: [(address: UInt64, data: [UInt8])] = (0..<40).map { index in
            index % 4 == 3
                ? (0xFEED_0000_0002, SyntheticCapture.eddystoneEIDAdvert(ephemeralID: 0x1111_2222_3333_4444, extra: [0x00]))
                : (0xFEED_0000_0001, SyntheticCapture.eddystoneEIDAdvert(ephemeralID: id))
        }
        let folder = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try SyntheticCapture.write(to: folder + "/fob.log", reports: reports)
        try "store: 7\ndepartment: 3\nhealthInterval: 1s\n".write(toFile: folder + "/scanner.yaml", atomically: true, encoding: .utf8)
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let subscription = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/7/departments/3/#", qos: 1)
        let scanner = try Mesh.program(
            "beacon-scanner", ["--config", folder + "/scanner.yaml", "--broker", broker.url, "--source", "btsnoop:\(folder)/fob.log"])
        #expect(await scanner.waitForExit(timeout: .seconds(30)) == .exited(0), "\(scanner.transcript)")
        _ = await subscription.waitForLine(timeout: .seconds(5)) { $0.contains("/status") && $0.contains("\"offline\"") }
        await subscription.stop()

        var heard: Set<String> = []
        var malformed: [Int] = []
        for line in subscription.lines {
            let topic = Mesh.topic(of: line)
            if topic.hasSuffix("/sightings") {
                for sighting in Mesh.payload(of: line)?["sightings"] as? [[String: Any]] ?? [] {
                    if let beacon = sighting["beacon"] as? String { heard.insert(beacon) }
                }
            } else if topic.hasSuffix("/health"), let count = Mesh.payload(of: line)?["malformed"] as? Int {
                malformed.append(count)
            }
        }
        #expect(heard == ["eddystone-eid:" + HexDigits.string(id, digits: 16)], "\(subscription.lines)")
        #expect(!malformed.isEmpty && malformed == malformed.sorted(), "\(subscription.lines)")
        #expect((1...10).contains(malformed.last ?? 0), "\(malformed)")
    }
}
