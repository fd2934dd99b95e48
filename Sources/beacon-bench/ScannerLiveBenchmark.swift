import ArgumentParser
import BeaconMeshBLE
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshScanner
import BeaconMeshService
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The live `hciN` path as a node runs it — `LEScanner` → pipeline → aggregator → encode → publish, inside the real
/// `ScannerService` — fed by a fake controller over a socketpair at a steady advert rate, with a real mosquitto.
struct ScannerLiveBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scanner-live",
        abstract: "Scanner service on a fake hci0 at a steady rate: CPU per advert, share of a core, peak RSS.",
        discussion: """
            A fake controller thread answers the scanner's HCI commands over a SOCK_SEQPACKET socketpair, then sends
            one LE Advertising Report per event, paced to --rate. CPU is the whole process's (getrusage, user + sys)
            from the first advert to one flush window after the last, less the fake controller thread's own; the
            batches are counted by a mosquitto_sub, and every advert must be in them.
            """)

    @Option(help: "Adverts per second the fake controller sends.")
    var rate: Int = 20_000

    @Option(help: "Seconds of adverts.")
    var seconds: Int = 10

    @Option(help: "Beacons in view (distinct iBeacons, heard in turn).")
    var beacons: Int = 1_000

    func run() throws {
        let benchmark = self
        try BenchRun.inWorkFolder { work in try await benchmark.measure(in: work) }
    }

    private func measure(in work: String) async throws {
        guard rate > 0, seconds > 0, beacons > 0 else { throw ValidationError("--rate, --seconds and --beacons must be positive") }
        let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited + ["max_packet_size 4194304"])
        defer { broker.process.stop() }
        let topic = Topics().sightings(NodeAddress(store: 1, department: 1, node: "bench")!)
        let batchesFile = work + "/batches.jsonl"
        let subscriber = try await broker.record(topic, into: batchesFile)
        defer { subscriber.stop() }

        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0 else { throw BenchError("socketpair failed") }
        let fake = PacedController(descriptor: fds[1], rate: rate, seconds: seconds, events: Self.events(beacons: beacons))
        let scannerEnd = fds[0]

        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        let node = NodeAddress(store: 1, department: 1, node: "bench")!
        var configuration = ScannerConfiguration(node: node, broker: BrokerConnection(url: broker.url))
        configuration.source = .adapter(index: 0)
        let boot = "bench"
        let startedAt = WallClock.now()
        let client = try MQTTClient(
            configuration: ScannerService.mqttConfiguration(for: configuration, boot: boot, startedAt: startedAt), logger: logger)
        let service = ScannerService(
            configuration: configuration, client: client, boot: boot, startedAt: startedAt, logger: logger,
            openAdapter: { adapter, _ in HCISocket(adopting: scannerEnd, device: "fake-\(adapter)", framing: .packets) })
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
        let running = Task { try await group.run() }

        let sending = try await fake.waitForSendingToEnd()
        try await Task.sleep(for: configuration.aggregation.flushInterval + .milliseconds(100))
        let end = ProcessUsage.now()
        let peak = Measure.peakResidentBytes()
        await group.triggerGracefulShutdown()
        try await running.value

        // Every advert sent must be in the published batches.
        var counted = 0
        let deadline = Measure.seconds() + 10
        repeat {
            counted = Self.advertsCounted(in: batchesFile)
            if counted >= fake.sent { break }
            try await Task.sleep(for: .milliseconds(200))
        } while Measure.seconds() < deadline

        let cpu = end.cpuSeconds - sending.startUsage.cpuSeconds
        let scannerCPU = cpu - sending.controllerCPUSeconds
        let wall = end.wallSeconds - sending.startUsage.wallSeconds
        let perAdvert = scannerCPU / Double(fake.sent) * 1e6
        let share = scannerCPU / wall
        print(
            "scanner-live benchmark: fake hci0 (SOCK_SEQPACKET), \(beacons) beacons in view, \(Measure.grouped(Double(fake.sent))) adverts in \(String(format: "%.2f", sending.seconds)) s (\(Measure.grouped(Double(fake.sent) / sending.seconds))/s asked \(Measure.grouped(Double(rate)))/s)"
        )
        print(
            "  adverts in batches \(Measure.grouped(Double(counted))) of \(Measure.grouped(Double(fake.sent)))\(counted == fake.sent ? "" : "  (MISSING \(fake.sent - counted))")"
        )
        print(
            "  CPU                \(String(format: "%.3f", cpu)) s whole process, \(String(format: "%.3f", sending.controllerCPUSeconds)) s of it the fake controller's thread"
        )
        print(
            "  scanner CPU        \(String(format: "%.2f", perAdvert)) µs per advert; \(String(format: "%.1f", share * 100)) % of one core here over \(String(format: "%.2f", wall)) s"
        )
        print(
            "  on a Pi core       3–4× slower: about \(String(format: "%.0f", share * 300))–\(String(format: "%.0f", share * 400)) % of one core at this rate"
        )
        print(
            "  memory             peak RSS \(Measure.megabytes(peak)) (the whole benchmark process: scanner, MQTT client, fake controller)")
        if counted != fake.sent { throw BenchError("\(fake.sent - counted) adverts missing from the published batches") }
    }

    /// One legacy LE Advertising Report event per beacon, RSSI varied.
    static func events(beacons: Int) -> [[UInt8]] {
        (0..<beacons).map { index in
            let data = IBeaconAdvertisingData(
                uuid: BenchBeacons.uuid, major: UInt16(index / 1000 + 1), minor: UInt16(index % 1000), measuredPower: -59
            ).bytes
            return LEAdvertisingReportEvent.make(
                address: BluetoothAddress(value: 0xC0_0000_0000 | UInt64(index)), rssi: Int8(-50 - index % 40), data: data)
        }
    }

    /// The sum of the sightings' counts in a file of `mosquitto_sub` lines.
    static func advertsCounted(in path: String) -> Int {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        var total = 0
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let sightings = object["sightings"] as? [[String: Any]]
            else { continue }
            total += sightings.reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
        }
        return total
    }
}

/// The process's CPU time so far (user + system, all threads) and the monotonic clock, read together.
struct ProcessUsage: Sendable {
    var cpuSeconds: Double
    var wallSeconds: Double

    static func now() -> ProcessUsage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return ProcessUsage(cpuSeconds: cpu, wallSeconds: Measure.seconds())
    }
}

/// A Bluetooth controller's far end of a socketpair, on a thread of its own: answers every HCI command with success
/// (LE features: Bluetooth 4, so legacy scanning), and once scanning is enabled sends `events` in turn, paced to
/// `rate` per second for `seconds`.
final class PacedController: Sendable {
    struct Sending: Sendable {
        var startUsage: ProcessUsage
        var seconds: Double
        /// CPU the sending thread used from the first advert to the last.
        var controllerCPUSeconds: Double
    }

    private let descriptor: Int32
    private let rate: Int
    private let seconds: Int
    private let events: [[UInt8]]
    private let result = Mutex<Sending?>(nil)
    private let sentCount = Atomic<Int>(0)

    init(descriptor: Int32, rate: Int, seconds: Int, events: [[UInt8]]) {
        self.descriptor = descriptor
        self.rate = rate
        self.seconds = seconds
        self.events = events
        Thread { [self] in run() }.start()
    }

    /// Adverts sent so far.
    var sent: Int { sentCount.load(ordering: .acquiring) }

    /// Waits until every advert has been sent; throws if the scanner never enabled scanning.
    func waitForSendingToEnd() async throws -> Sending {
        let deadline = Measure.seconds() + Double(seconds) + 30
        while Measure.seconds() < deadline {
            if let sending = result.withLock({ $0 }) { return sending }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchError("the fake controller did not finish sending: the scanner never enabled scanning, or fell far behind")
    }

    private func run() {
        let features = HexDigits.bytes("040e0c01032000ff00000000000000")!  // a Bluetooth 4 controller's answer
        var buffer = [UInt8](repeating: 0, count: 300)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 4, buffer[0] == 0x01 else { break }
            let opcode = UInt16(buffer[1]) | UInt16(buffer[2]) << 8
            let answer = opcode == 0x2003 ? features : [0x04, 0x0E, 0x04, 0x01, buffer[1], buffer[2], 0]
            guard send(answer) else { break }
            if opcode == 0x200C && buffer[4] == 1 { sendAdverts() }
        }
        close(descriptor)
    }

    private func sendAdverts() {
        let total = rate * seconds
        let startUsage = ProcessUsage.now()
        let threadStart = Measure.threadCPUSeconds()
        let start = startUsage.wallSeconds
        var sent = 0
        var next = 0
        while sent < total {
            let due = min(total, Int((Measure.seconds() - start) * Double(rate)) + 1)
            while sent < due {
                guard send(events[next]) else { return }
                next = next + 1 == events.count ? 0 : next + 1
                sent += 1
            }
            sentCount.store(sent, ordering: .releasing)
            var pause = timespec(tv_sec: 0, tv_nsec: 250_000)
            nanosleep(&pause, nil)
        }
        let sending = Sending(
            startUsage: startUsage, seconds: Measure.seconds() - start,
            controllerCPUSeconds: Measure.threadCPUSeconds() - threadStart)
        result.withLock { $0 = sending }
    }

    private func send(_ packet: [UInt8]) -> Bool {
        packet.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == packet.count
    }
}
