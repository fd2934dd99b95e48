import BeaconMeshCore
import BeaconMeshFobs
import Foundation
import Logging

/// `beacon-bench coordinator --compare-eid`: the same drain, alternating the chain's 5,000 members with static
/// iBeacons and with Eddystone-EID fobs (K = 10, counting from the Unix epoch; the backlog carries each fob's id of
/// now), each pass on a registry of its own: what resolving a sighting's id costs the coordinator.
extension CoordinatorBenchmark {
    /// What one pass measured.
    struct EIDPass {
        var fobs: Bool
        var drain: Drain
    }

    func compareEID(chain: BenchChain, broker: BenchProcess, drainTopic: String, logger: Logger) async throws -> [EIDPass] {
        let secrets = chain.work + "/bench.secrets"
        let secretsKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try (secretsKey + "\n").write(toFile: secrets, atomically: true, encoding: .utf8)
        var keys: [[UInt8]] = []
        for _ in 1...5_000 { keys.append((0..<16).map { _ in UInt8.random(in: 0...255) }) }
        let fobs = keys.map { EddystoneEID(identityKey: $0, rotationExponent: 10)! }
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        var passes: [EIDPass] = []
        for (index, withFobs) in [false, true, false, true].enumerated() {
            var rows = ""
            for member in 1...5_000 {
                let store = Self.store(ofMember: member)
                rows +=
                    withFobs
                    ? "m\(member),Member \(member),Tea,,,0,,,\(hex(keys[member - 1])):10:0\n"
                    : "m\(member),Member \(member),Tea,ibeacon:\(BenchBeacons.uuidText):\(store):\(member),,0,,\n"
            }
            try chain.writeConfig(members: rows, database: "bench-eid-\(index).sqlite", secretsKeyFile: withFobs ? secrets : nil)
            let drained = try await drain(
                chain: chain, broker: broker, port: chain.port, drainTopic: drainTopic, boot: "bench-eid-\(index)", pinned: nil,
                logger: logger, fobs: withFobs ? fobs : nil)
            if withFobs {
                guard let fobs = drained.fobs, fobs.count == 5_000, fobs.unresolved == 0 else {
                    throw BenchError("the coordinator did not resolve every fob's id: \(String(describing: drained.fobs))")
                }
            }
            passes.append(EIDPass(fobs: withFobs, drain: drained))
        }
        return passes
    }

    func printEIDPasses(_ passes: [EIDPass]) {
        func micros(_ seconds: Double?) -> String { seconds.map { "\((($0 * 1e7).rounded() / 10)) µs" } ?? "n/a" }
        print("  eid fobs           the same drain, alternating, each pass on a registry of its own:")
        for pass in passes {
            print(
                "    \(pass.fobs ? "Eddystone-EID fobs" : "static iBeacons   ") \(Measure.grouped(pass.drain.coordinatorRate)) batches/s, CPU per batch \(micros(pass.drain.coordinatorCPUPerBatch))"
            )
        }
        func mean(_ fobs: Bool) -> Double? {
            let figures = passes.filter { $0.fobs == fobs }.compactMap(\.drain.coordinatorCPUPerBatch)
            return figures.isEmpty ? nil : figures.reduce(0, +) / Double(figures.count)
        }
        if let plain = mean(false), let resolved = mean(true) {
            print(
                "    resolution adds \(micros((resolved - plain) / Double(sightingsPerBatch))) of the coordinator's CPU per sighting (means of the passes)"
            )
        }
    }
}
