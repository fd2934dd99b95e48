import ArgumentParser
import BeaconMeshCore
import BeaconMeshTesting
import BeaconMeshWire

/// Feeds synthetic HCI advertising events for many beacons through the scanner's whole pure path
/// (parse → decode → filter → aggregate → encode) and prints adverts per second and memory.
struct ScannerBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scanner",
        abstract: "Scanner hot path: adverts/s on one core, and peak memory with many beacons in view.",
        discussion: """
            Instructions per advert on the hot path (machine-independent): run under callgrind twice, with and
            without adverts, and divide the difference:
              valgrind --tool=callgrind .build/release/beacon-bench scanner --window 1h --no-encode --adverts 0
              valgrind --tool=callgrind .build/release/beacon-bench scanner --window 1h --no-encode --adverts 1000000
            """)

    @Option(help: "Beacons in view (distinct iBeacons).")
    var beacons: Int = 5_000

    @Option(help: "Adverts to process.")
    var adverts: Int = 20_000_000

    @Option(help: "Adverts per second the simulated air carries (sets how many adverts fall in one flush window).")
    var airRate: Int = 40_000

    @Flag(help: "The beacons are Eddystone-EID fobs (service data AA FE 30, an 8-byte id each) instead of iBeacons.")
    var eid = false

    @Flag(help: "Skip encoding batches as JSON (measures parse → decode → filter → aggregate alone).")
    var noEncode = false

    @Option(
        help: ArgumentHelp(
            "Flush window. A window longer than the run (e.g. 1h) leaves only the per-advert hot path.", valueName: "DURATION"))
    var window: String = "500ms"

    func run() throws {
        let node = NodeAddress(store: 1, department: 10, node: "bench")!
        var configuration = SightingAggregator.Configuration()
        guard let flushInterval = DurationText.parse(window), flushInterval > .zero else {
            throw ValidationError("--window '\(window)' must be a duration such as 500ms")
        }
        configuration.flushInterval = flushInterval
        configuration.lostAfter = max(.seconds(10), flushInterval * 2)
        var pipeline = ScannerPipeline(aggregator: SightingAggregator(node: node, boot: "bench", configuration: configuration))

        // Pre-built H4 events: one legacy LE Advertising Report per beacon, RSSI varied.
        let uuid = BenchBeacons.uuid
        var events: [[UInt8]] = []
        for index in 0..<beacons {
            let data =
                eid
                ? SyntheticCapture.eddystoneEIDAdvert(ephemeralID: 0x5EED_0000_0000_0000 | UInt64(index))
                : IBeaconAdvertisingData(uuid: uuid, major: UInt16(index / 1000 + 1), minor: UInt16(index % 1000), measuredPower: -59)
                    .bytes
            for variant in 0..<4 {
                events.append(
                    LEAdvertisingReportEvent.make(
                        address: BluetoothAddress(value: 0xC0_0000_0000 | UInt64(index)), rssi: Int8(-50 - (index + variant * 7) % 40),
                        data: data))
            }
        }
        let flat = events.flatMap { $0 }
        let eventLength = events.first?.count ?? 0
        let baseline = Measure.residentBytes()

        var batches = 0
        var encodedBytes = 0
        var peakPrivate = Measure.privateResidentBytes()
        let microsecondsPerAdvert = 1_000_000 / Double(airRate)
        let start = Measure.seconds()
        let cpuStart = Measure.threadCPUSeconds()
        flat.withUnsafeBytes { all in
            let eventCount = events.count
            var virtualMicroseconds = 0.0
            let origin: Int64 = 1_800_000_000_000
            for advert in 0..<adverts {
                let offset = (advert % eventCount) * eventLength
                virtualMicroseconds += microsecondsPerAdvert
                let now = Timestamp(milliseconds: origin + Int64(virtualMicroseconds) / 1000)
                let event = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + eventLength)])
                if let batch = pipeline.handle(h4Event: event, at: now) {
                    batches += 1
                    if !noEncode { encodedBytes += WireCodec.encode(batch).count }
                }
                if advert & 1023 == 0, let batch = pipeline.tick(at: now) {
                    batches += 1
                    if !noEncode {
                        let encoded = WireCodec.encode(batch)
                        encodedBytes += encoded.count
                        if batches % 16 == 0 { peakPrivate = max(peakPrivate, Measure.privateResidentBytes()) }
                    }
                }
            }
        }
        let elapsed = Measure.seconds() - start
        let cpu = Measure.threadCPUSeconds() - cpuStart
        let counters = pipeline.counters
        print(
            "scanner benchmark: \(beacons) beacons in view, \(Measure.grouped(Double(adverts))) \(eid ? "Eddystone-EID" : "iBeacon") adverts"
        )
        if adverts > 0 {
            print(
                "  throughput         \(Measure.grouped(Double(adverts) / cpu)) adverts/s on one core (\(String(format3(cpu))) s CPU, \(String(format3(elapsed))) s wall)"
            )
        }
        print(
            "  batches            \(batches) (\(Measure.grouped(Double(encodedBytes))) bytes of JSON), beacons tracked \(pipeline.aggregator.trackedBeacons), decoded frames \(Measure.grouped(Double(counters.beaconFrames)))"
        )
        peakPrivate = max(peakPrivate, Measure.privateResidentBytes())
        print(
            "  memory             private (heap) \(Measure.megabytes(peakPrivate)) at peak, of which the benchmark's own test events \(Measure.megabytes(flat.count + events.count * 56))"
        )
        print(
            "                     RSS \(Measure.megabytes(Measure.peakResidentBytes())) at peak, \(Measure.megabytes(baseline)) before the run (shared Swift and C libraries, mapped once per machine)"
        )
    }

    private func format3(_ value: Double) -> String {
        let scaled = (value * 1000).rounded() / 1000
        return "\(scaled)"
    }
}
