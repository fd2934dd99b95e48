import ArgumentParser
import BeaconMeshCore
import BeaconMeshTesting
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The whole `beacon-scanner` process on a live source, as a node runs it: `--source hci0`, where hci0 is a fake
/// controller (libFakeHCIAdapter.so, loaded with LD_PRELOAD, connects libbluetooth's adapter calls to a Unix socket
/// the benchmark serves), at a steady advert rate into a real mosquitto: peak RSS per run, and the worst of the runs.
struct ScannerLiveProcessBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scanner-live-process",
        abstract: "The beacon-scanner process on a fake hci0 at a steady rate, run --repeats times: peak RSS of each run.",
        discussion: """
            Each run starts the beacon-scanner built next to beacon-bench (or --scanner) under GNU time as
              beacon-scanner --store 3 --department N --node a --broker URL --source hci0 --log-level error
            with LD_PRELOAD naming libFakeHCIAdapter.so (FakeHCIAdapter.c beside this benchmark's source, compiled by
            clang into the work folder) and BEACONMESH_FAKE_HCI a Unix socket the benchmark listens on. The fake
            controller answers the scanner's HCI commands and, once scanning is on, sends --rate LE Advertising Reports
            a second for --seconds: iBeacon adverts from --beacons beacons in turn, with --noise Apple Continuity
            adverts between two of them (9: nine in ten are noise, as in a busy store). Once every iBeacon advert is in
            the batches a mosquitto_sub receives (seq 1…n without a gap), the scanner gets SIGTERM and must exit 0.
            Prints each run's peak RSS (GNU time's %M) and CPU, then the worst peak.
            Build with swift build -c release (beacon-bench and beacon-scanner); needs clang, mosquitto, GNU time.
            """)

    @Option(help: "Adverts per second the fake controller sends.")
    var rate: Int = 20_000

    @Option(help: "Seconds of adverts per run.")
    var seconds: Int = 10

    @Option(help: "Beacons in view (distinct iBeacons, heard in turn).")
    var beacons: Int = 5_000

    @Option(help: "Apple Continuity adverts (not beacons) between two iBeacon adverts: 9 makes nine in ten noise.")
    var noise: Int = 9

    @Option(help: "Runs; each prints its figures, then the worst peak.")
    var repeats: Int = 10

    @Option(help: "The beacon-scanner to run (default: the one next to beacon-bench).")
    var scanner: String?

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    private func measure(in work: String) async throws {
        guard rate > 0, seconds > 0, beacons > 0, repeats > 0, noise >= 0 else {
            throw ValidationError("--rate, --seconds, --beacons and --repeats must be positive, --noise not negative")
        }
        let scannerPath = try TimedScanner.executable(scanner)
        let library = try FakeAdapterLibrary.compile(into: work)
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited + ["max_packet_size 4194304"])
        defer { broker.process.stop() }
        let events = Self.events(beacons: beacons, noise: noise)
        print(
            "scanner-live-process benchmark: \(scannerPath) on a fake hci0 (\(library)), \(Measure.grouped(Double(rate))) adverts/s for \(seconds) s, one in \(noise + 1) from \(beacons) iBeacons, the rest Continuity noise; \(repeats) runs"
        )
        var peaks: [Int] = []
        for attempt in 1...repeats {
            let department = attempt
            let received = work + "/batches-\(attempt).jsonl"
            let topic = Topics().sightings(NodeAddress(store: 3, department: UInt16(department), node: "a")!)
            let subscriber = try await broker.record(topic, into: received)
            defer { subscriber.stop() }

            let socketPath = work + "/hci-\(attempt).sock"
            let listener = try FakeAdapterListener(path: socketPath)
            let run = try TimedScanner.start(
                scannerPath,
                arguments: [
                    "--store", "3", "--department", "\(department)", "--node", "a", "--broker", broker.url, "--source", "hci0",
                    "--log-level", "error",
                ], peakFile: work + "/peak-\(attempt)", environment: ["LD_PRELOAD=\(library)", "BEACONMESH_FAKE_HCI=\(socketPath)"])
            let connection: Int32
            do {
                connection = try listener.accept(within: 10)
            } catch {
                run.send(SIGKILL)
                _ = try? run.wait()
                throw error
            }
            let fake = PacedController(descriptor: connection, rate: rate, seconds: seconds, events: events)
            _ = try await fake.waitForSendingToEnd()
            let beaconAdverts = SyntheticCapture.iBeaconAdverts(of: fake.sent, noise: noise)
            var tally = BatchTally()
            let deadline = Measure.seconds() + 10
            repeat {
                try await Task.sleep(for: .milliseconds(200))
                tally = BatchTally(file: received)
            } while tally.adverts < beaconAdverts && Measure.seconds() < deadline
            run.send(SIGTERM)
            let finished = try run.wait()
            subscriber.stop()
            print(
                "  run \(attempt): peak RSS \(Measure.megabytes(finished.peakBytes)); \(String(format: "%.3f", finished.cpuSeconds)) s CPU for \(Measure.grouped(Double(fake.sent))) adverts (\(String(format: "%.2f", finished.cpuSeconds / Double(fake.sent) * 1e6)) µs each, start-up included); \(tally.batches) batches, \(Measure.grouped(Double(tally.adverts))) of \(Measure.grouped(Double(beaconAdverts))) iBeacon adverts counted; exit \(finished.status)"
            )
            guard finished.status == 0 else { throw BenchError("run \(attempt): the scanner exited with \(finished.status) on SIGTERM") }
            guard tally.adverts == beaconAdverts, tally.sequenceIsWhole else {
                throw BenchError(
                    "run \(attempt): the batches count \(tally.adverts) of \(beaconAdverts) iBeacon adverts, seq whole: \(tally.sequenceIsWhole)"
                )
            }
            peaks.append(finished.peakBytes)
        }
        print("  peak RSS of the \(peaks.count) runs: \(peaks.map(Measure.megabytes).joined(separator: ", "))")
        print("  worst peak RSS \(Measure.megabytes(peaks.max() ?? 0)) (best \(Measure.megabytes(peaks.min() ?? 0)))")
    }

    /// The events the fake controller sends in turn: beacon 0's iBeacon advert, `noise` Continuity adverts, beacon 1's,
    /// and so on, so that of any first n sent, `SyntheticCapture.iBeaconAdverts(of: n, noise:)` are iBeacons'.
    static func events(beacons: Int, noise: Int) -> [[UInt8]] {
        let noiseReports = ContinuityNoise.reports(count: noise > 0 ? ContinuityNoise.distinctReports : 0)
        var next = 0
        return ScannerLiveBenchmark.events(beacons: beacons).flatMap { beacon in
            [beacon]
                + (0..<noise).map { _ in
                    defer { next = (next + 1) % noiseReports.count }
                    return noiseReports[next]
                }
        }
    }
}
