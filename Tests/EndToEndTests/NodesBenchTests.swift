import BeaconMeshTesting
import Foundation
import Testing

/// `beacon-bench nodes` measures head office's fleet commands on real processes (the figures, at 100 nodes and
/// 10,000 statuses, are in `Sources/beacon-bench/README.md`). Run small here: what this checks is that every node's
/// apply is counted from mosquitto_sub's stamps, and that nodes list lists every retained status.
@Suite("beacon-bench nodes", .serialized)
struct NodesBenchTests {
    @Test("five scanners, two rounds of nodes set, each applied by all five; nodes list of 300 retained statuses lists them all")
    func fleetBenchmark() async throws {
        let bench = try Mesh.program("beacon-bench", ["nodes", "--nodes", "5", "--rounds", "2", "--statuses", "300", "--repeats", "1"])
        let status = await bench.waitForExit(timeout: .seconds(120))
        #expect(status == .exited(0), "\(bench.transcript)")
        let rounds = bench.stdoutLines.filter { $0.hasPrefix("round ") }
        #expect(rounds.count == 2 && rounds.allSatisfy { $0.contains("(exit 0); applied by 5 nodes: p50 ") }, "\(bench.transcript)")
        #expect(bench.stdoutLines.contains { $0.hasPrefix("all rounds, 10 applies: p50 ") }, "\(bench.transcript)")
        #expect(
            bench.stdoutLines.contains {
                $0.hasPrefix("nodes list --json, 300 retained statuses: ") && $0.hasSuffix("(run 1, all listed)")
            },
            "\(bench.transcript)")
    }
}
