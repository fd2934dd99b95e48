import BeaconMeshTesting
import Foundation
import Testing

/// A capture replay at `--speed max` reads only as far ahead as the pipeline takes: peak memory does not grow
/// with the capture's size.
@Suite("beacon-scanner replay memory", .serialized)
struct ScannerReplayMemoryTests {
    /// Beacons in view in the captures: 1,000 make batches of about 150 kB, so anything held per batch shows.
    static let beacons = 1_000

    /// The peak resident set (VmHWM, kB) of a scanner replaying `capture` at `--speed max`, read from /proc while it
    /// runs; the replay must finish with exit 0 and its last batch must carry all `beacons`.
    static func peakResidentKilobytes(replaying capture: String, broker: MosquittoBroker, department: Int) async throws -> (
        kilobytes: Int, seconds: Double
    ) {
        let clock = ContinuousClock()
        let started = clock.now
        let scanner = try Mesh.program(
            "beacon-scanner",
            [
                "--store", "3", "--department", "\(department)", "--broker", broker.url,
                "--source", "btsnoop:\(capture)", "--speed", "max",
            ])
        var peak = 0
        while scanner.isRunning && clock.now - started < .seconds(120) {
            if let status = try? String(contentsOfFile: "/proc/\(scanner.processID)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            {
                peak = max(peak, kilobytes)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let status = await scanner.waitForExit(timeout: .seconds(5))
        #expect(status == .exited(0), "\(capture): \(scanner.transcript)")
        let elapsed = clock.now - started
        return (peak, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    @Test("replaying 1,000,000 adverts peaks within a few MB of replaying 10,000, and every advert is counted")
    func flatPeakMemory() async throws {
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let small = directory + "/small.log"
        let big = directory + "/big.log"
        try SyntheticCapture.write(to: small, adverts: 10_000, beacons: Self.beacons)
        let bigSize = try SyntheticCapture.write(to: big, adverts: 1_000_000, beacons: Self.beacons)
        #expect(bigSize > 60_000_000, "the big capture should be about 70 MB, not \(bigSize) bytes")

        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let subscription = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/3/departments/2/nodes/a/sightings", qos: 1)
        let (smallPeak, smallSeconds) = try await Self.peakResidentKilobytes(replaying: small, broker: broker, department: 1)
        let (bigPeak, bigSeconds) = try await Self.peakResidentKilobytes(replaying: big, broker: broker, department: 2)
        print("replay peak RSS: 10,000 adverts \(smallPeak) kB in \(smallSeconds) s; 1,000,000 adverts \(bigPeak) kB in \(bigSeconds) s")
        #expect(smallPeak > 0 && bigPeak > 0, "no VmHWM read from /proc")
        #expect(
            bigPeak <= smallPeak + 6 * 1024,
            "peak RSS grew with the capture: 10,000 adverts \(smallPeak) kB, 1,000,000 adverts \(bigPeak) kB")

        // Backpressure must not lose anything: the big replay's batches are numbered 1…n without a gap, and
        // their counts add up to every advert.
        func received() -> (seqs: [Int], adverts: Int) {
            var seqs: [Int] = []
            var adverts = 0
            for line in subscription.lines {
                guard let batch = Mesh.payload(of: line) else { continue }
                seqs.append(batch["seq"] as? Int ?? 0)
                let sightings = batch["sightings"] as? [[String: Any]] ?? []
                adverts += sightings.reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
            }
            return (seqs, adverts)
        }
        _ = await eventually(timeout: .seconds(10), interval: .milliseconds(200)) { received().adverts >= 1_000_000 }
        await subscription.stop()
        let (seqs, adverts) = received()
        #expect(
            seqs == Array(1...max(1, seqs.count)), "batches missing or out of order: \(seqs.count) received, last seq \(seqs.last ?? 0)")
        #expect(adverts == 1_000_000, "the batches of the 1,000,000-advert replay count \(adverts) adverts")
    }
}
