import BeaconMeshTesting
import Foundation
import Testing

/// `beacon-bench scanner-live-process` measures the real `beacon-scanner` on `--source hci0` where the kernel has no
/// Bluetooth: the library it compiles and preloads (`FakeHCIAdapter.c`) hands libbluetooth's hci0 to the benchmark's
/// fake controller. Run small here (the figures are in `Sources/beacon-bench/README.md`); what this checks is that the
/// scanner process really scans through it — every iBeacon advert among the Continuity noise in its batches, a clean
/// exit on SIGTERM — and that the benchmark reports each run's peak and the worst of them.
@Suite("beacon-bench scanner-live-process", .serialized)
struct ScannerLiveProcessBenchTests {
    /// The figure in MiB before " MiB" after `marker` in `line`.
    static func mebibytes(after marker: String, in line: String) -> Double? {
        guard let start = line.range(of: marker)?.upperBound, let end = line[start...].range(of: " MiB")?.lowerBound else {
            return nil
        }
        return Double(line[start..<end])
    }

    @Test("two runs of the scanner on a fake hci0: 400 iBeacon adverts among 3,600 of noise counted in each, worst peak printed")
    func scannerScansTheFakeAdapter() async throws {
        let bench = try Mesh.program(
            "beacon-bench",
            ["scanner-live-process", "--rate", "2000", "--seconds", "2", "--beacons", "50", "--noise", "9", "--repeats", "2"])
        let status = await bench.waitForExit(timeout: .seconds(180))
        #expect(status == .exited(0), "\(bench.transcript)")

        let runs = bench.stdoutLines.filter { $0.hasPrefix("  run ") }
        #expect(runs.count == 2, "\(bench.transcript)")
        for run in runs {
            #expect(run.contains("400 of 400 iBeacon adverts counted; exit 0"), "\(run)")
        }
        let peaks = runs.compactMap { Self.mebibytes(after: "peak RSS ", in: $0) }
        #expect(peaks.count == 2 && peaks.allSatisfy { $0 > 1 }, "no peak RSS read from GNU time: \(runs)")
        let worst = bench.stdoutLines.first { $0.hasPrefix("  worst peak RSS ") }
        #expect(worst.flatMap { Self.mebibytes(after: "worst peak RSS ", in: $0) } == peaks.max(), "\(worst ?? "no worst line")")
        #expect(worst.flatMap { Self.mebibytes(after: "(best ", in: $0) } == peaks.min(), "\(worst ?? "no worst line")")
    }
}
