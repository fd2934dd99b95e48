import ArgumentParser
import BeaconMeshCore
import BeaconMeshTesting
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The whole `beacon-scanner` process as a user runs it, replaying a synthetic capture at `--speed max` into a real
/// mosquitto: CPU per advert (user + sys of the reaped process, a tiny capture's start-up subtracted) and peak RSS,
/// with every advert accounted for in the batches received.
struct ScannerProcessBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scanner-process",
        abstract: "The beacon-scanner process replaying a capture at --speed max: adverts/s of CPU and peak RSS.",
        discussion: """
            Writes a btsnoop capture of --adverts adverts, iBeacons from --beacons beacons with --noise Apple Continuity
            adverts between two of them (one advert every 100 µs of recorded time, as SyntheticCapture writes them),
            and a 10-advert one, starts mosquitto on a free loopback port, and runs the beacon-scanner built next to
            beacon-bench (or --scanner) on each, as
              beacon-scanner --store 3 --department D --broker URL --source btsnoop:FILE --speed max --log-level error
            CPU is user + sys from wait4's rusage (microseconds), peak RSS is GNU time's %M: the scanner runs under
            /usr/bin/time, a small process of its own, since a child's ru_maxrss includes whatever its parent held at
            the spawn (beacon-bench's own memory). The 10-advert run's CPU is the start-up, subtracted from the big
            run's. A mosquitto_sub receives each run's batches: their seq must
            run 1…n without a gap and their counts must add up to every iBeacon advert, or the benchmark fails. At the
            end: every run's peak, the worst of them, and the range of CPU per advert.
            Needs mosquitto, mosquitto_sub and GNU time (/usr/bin/time); build with swift build -c release.
            """)

    @Option(help: "Adverts in the capture.")
    var adverts: Int = 300_000

    @Option(help: "Beacons in view (distinct iBeacons, heard in turn).")
    var beacons: Int = 5_000

    @Option(help: "Apple Continuity adverts (not beacons) between two iBeacon adverts: 9 makes nine in ten noise.")
    var noise: Int = 0

    @Option(help: "Times to run the pair (start-up, capture); each run prints its figures.")
    var repeats: Int = 3

    @Option(
        help: """
            The beacon-scanner to run (default: the one next to beacon-bench). Give it more than once to compare \
            builds side by side (a packaged one against a dynamically linked one): each run goes through them in turn.
            """)
    var scanner: [String] = []

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    private func measure(in work: String) async throws {
        guard adverts > 0, beacons > 0, repeats > 0, noise >= 0 else {
            throw ValidationError("--adverts, --beacons and --repeats must be positive, --noise not negative")
        }
        let scannerPaths = try (scanner.isEmpty ? [nil] : scanner.map { Optional($0) }).map(TimedScanner.executable)
        let tiny = work + "/tiny.log"
        let capture = work + "/capture.log"
        try SyntheticCapture.write(to: tiny, adverts: 10, beacons: 10)
        let size = try SyntheticCapture.write(to: capture, adverts: adverts, beacons: beacons, noise: noise)
        let beaconAdverts = SyntheticCapture.iBeaconAdverts(of: adverts, noise: noise)

        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited)
        defer { broker.process.stop() }
        print(
            "scanner-process benchmark: \(scannerPaths.joined(separator: ", "))\n  capture \(Measure.grouped(Double(adverts))) adverts, \(Measure.grouped(Double(beaconAdverts))) of them from \(Measure.grouped(Double(beacons))) beacons, the rest Continuity noise (\(Measure.megabytes(size))), --speed max, mosquitto on port \(broker.port)"
        )

        var rates = Array(repeating: [Double](), count: scannerPaths.count)
        var peaks = Array(repeating: [Int](), count: scannerPaths.count)
        for attempt in 1...repeats {
            for (index, scannerPath) in scannerPaths.enumerated() {
                // Each run has a department of its own, so its batches are told apart from the other runs'.
                let department = (attempt - 1) * scannerPaths.count + index + 2
                let label = scannerPaths.count == 1 ? "run \(attempt)" : "run \(attempt), \(scannerPath)"
                let (rate, peak) = try await measureRun(
                    scannerPath, label: label, department: department, capture: capture, tiny: tiny, expected: beaconAdverts,
                    broker: broker)
                rates[index].append(rate)
                peaks[index].append(peak)
            }
        }
        for (index, scannerPath) in scannerPaths.enumerated() {
            let microseconds = rates[index].map { 1e6 / $0 }
            if scannerPaths.count > 1 { print("  \(scannerPath):") }
            print("  peak RSS of the \(peaks[index].count) runs: \(peaks[index].map(Measure.megabytes).joined(separator: ", "))")
            print(
                "  worst peak RSS \(Measure.megabytes(peaks[index].max() ?? 0)) (best \(Measure.megabytes(peaks[index].min() ?? 0))); CPU per advert \(String(format: "%.2f", microseconds.min() ?? 0))–\(String(format: "%.2f", microseconds.max() ?? 0)) µs (best \(Measure.grouped(rates[index].max() ?? 0)) adverts/s of CPU, worst \(Measure.grouped(rates[index].min() ?? 0)))"
            )
        }
    }

    /// One pair of runs of one scanner (start-up, then the capture): its adverts per second of CPU and peak RSS, every
    /// advert accounted for in the batches received.
    private func measureRun(
        _ scannerPath: String, label: String, department: Int, capture: String, tiny: String, expected beaconAdverts: Int,
        broker: BenchBroker
    ) async throws -> (rate: Double, peak: Int) {
        let startUp = try run(scannerPath, capture: tiny, department: 1, broker: broker.url)
        guard startUp.status == 0 else { throw BenchError("the scanner exited with \(startUp.status) replaying 10 adverts") }
        let received = capture + ".batches-\(department).jsonl"
        let topic = Topics().sightings(NodeAddress(store: 3, department: UInt16(department), node: "a")!)
        let subscriber = try await broker.record(topic, into: received)
        defer { subscriber.stop() }

        let full = try run(scannerPath, capture: capture, department: department, broker: broker.url)
        guard full.status == 0 else { throw BenchError("the scanner exited with \(full.status) replaying the capture") }
        var tally = BatchTally()
        let deadline = Measure.seconds() + 20
        repeat {
            tally = BatchTally(file: received)
            if tally.adverts >= beaconAdverts { break }
            try await Task.sleep(for: .milliseconds(200))
        } while Measure.seconds() < deadline
        subscriber.stop()

        let cpu = full.cpuSeconds - startUp.cpuSeconds
        // Start-up varies by a few milliseconds from run to run: a replay that costs less than the start-up says
        // nothing about the rate (a 20,000-advert capture once came to 2 · 10¹⁰ adverts/s).
        guard cpu >= startUp.cpuSeconds else {
            throw BenchError(
                "\(label): the replay cost \(String(format: "%.3f", cpu)) s of CPU beyond start-up, too little to tell from its variation; give --adverts 100000 or more"
            )
        }
        let rate = Double(adverts) / cpu
        print(
            "  \(label): \(String(format: "%.3f", full.cpuSeconds)) s CPU − \(String(format: "%.3f", startUp.cpuSeconds)) s start-up = \(String(format: "%.3f", cpu)) s → \(Measure.grouped(rate)) adverts/s of CPU (\(String(format: "%.2f", cpu / Double(adverts) * 1e6)) µs each); peak RSS \(Measure.megabytes(full.peakBytes)) (start-up run \(Measure.megabytes(startUp.peakBytes)), so the capture's own \(Measure.megabytes(full.peakBytes - startUp.peakBytes))); \(tally.batches) batches, \(Measure.grouped(Double(tally.adverts))) adverts counted"
        )
        guard tally.adverts == beaconAdverts else {
            throw BenchError("\(label): the batches received count \(tally.adverts) iBeacon adverts of \(beaconAdverts)")
        }
        guard tally.sequenceIsWhole else {
            throw BenchError("\(label): batch seq numbers are not 1…\(tally.batches) (missing, doubled or out of order)")
        }
        return (rate, full.peakBytes)
    }

    /// Runs the scanner on `capture` to its end.
    private func run(_ path: String, capture: String, department: Int, broker: String) throws -> TimedScanner.Run {
        try TimedScanner.start(
            path,
            arguments: [
                "--store", "3", "--department", "\(department)", "--broker", broker, "--source", "btsnoop:\(capture)", "--speed",
                "max", "--log-level", "error",
            ], peakFile: capture + ".peak"
        ).wait()
    }
}

/// What a file of `mosquitto_sub` lines (one sighting batch each) holds: batches, their seq numbers, the adverts
/// their sightings count.
struct BatchTally {
    var batches = 0
    var adverts = 0
    var sequenceIsWhole = true

    init() {}

    init(file: String) {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return }
        var expected = 1
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let sightings = object["sightings"] as? [[String: Any]]
            else { continue }
            batches += 1
            if (object["seq"] as? Int) != expected { sequenceIsWhole = false }
            expected += 1
            adverts += sightings.reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
        }
    }
}
