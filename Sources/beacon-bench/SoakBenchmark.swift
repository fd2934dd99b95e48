import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Dispatch
import Foundation
import Logging
import Synchronization

/// The whole mesh under a steady simulated load for a given time, reported every interval: resident memory and CPU
/// of each process, sightings and events per second, and the coordinator's lag. Memory must be flat after warm-up.
///
/// The mesh: a mosquitto broker, the coordinator, three simulated scanners (one extra store's departments), a plain
/// monitor, and a load of `stores` × `departments` department nodes published from this process — members walking
/// between departments, leaving and coming back — as their scanners would. The lag is timed with a probe member
/// who walks in every few seconds: from the batch's publish to the `arrived` event, less the arrival settling.
struct SoakBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Run the whole mesh under simulated load and print RSS, CPU, sightings/s, events/s and lag every interval.",
        discussion: "Not part of the test suite. Example: swift run -c release beacon-bench soak --duration 30m")

    @Option(help: "How long to run (e.g. 30m).")
    var duration: String = "30m"

    @Option(help: "How often to report (e.g. 60s).")
    var every: String = "60s"

    @Option(help: "Stores under load.")
    var stores: Int = 50

    @Option(help: "Departments per store.")
    var departments: Int = 3

    @Option(help: "Members, spread over the stores.")
    var members: Int = 5_000

    func validate() throws {
        guard let duration = DurationText.parse(duration), duration >= .seconds(10) else {
            throw ValidationError("--duration '\(duration)' must be a duration of at least 10s, such as 30m")
        }
        guard let every = DurationText.parse(every), every >= .seconds(5) else {
            throw ValidationError("--every '\(every)' must be a duration of at least 5s, such as 60s")
        }
        guard (1...500).contains(stores), (1...50).contains(departments), members >= stores else {
            throw ValidationError("--stores must be 1…500, --departments 1…50, and --members at least --stores")
        }
    }

    func run() throws {
        let benchmark = self
        try BenchRun.blocking { try await benchmark.soak() }
    }

    /// Probe members, one per probe (a probe every 20 s: 90 in 30 minutes).
    static let probes = 500

    /// The extra store the simulated scanners stand in.
    private var scannerStore: Int { stores + 1 }

    private func soak() async throws {
        let total = DurationText.parse(duration)!
        let interval = DurationText.parse(every)!
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-soak-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let mosquitto = try await BenchBroker.start(in: work, settings: ["max_queued_messages 10000"])
        let port = mosquitto.port
        var processes: [(name: String, process: BenchProcess)] = [("mosquitto", mosquitto.process)]
        defer { for (_, process) in processes.reversed() { process.stop() } }

        let uuid = BenchBeacons.uuidText
        var csv = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\n"
        for index in 0..<members { csv += "m\(index),Member \(index),Tea,ibeacon:\(uuid):\(index % stores + 1):\(index),,0,,\n" }
        for minor in 1...5 { csv += "s\(minor),Shopper \(minor),,ibeacon:\(uuid):\(scannerStore):\(minor),,0,,\n" }
        // A new probe member each time: one coming back within visitGap would resume its visit, not be greeted.
        for index in 0..<Self.probes { csv += "probe\(index),Probe \(index),,ibeacon:\(uuid):1:\(60000 + index),,0,,\n" }
        try csv.write(toFile: work + "/members.csv", atomically: true, encoding: .utf8)
        let layout = (0..<departments).map { "      - {id: \(($0 + 1) * 10), name: Department \(($0 + 1) * 10)}" }.joined(separator: "\n")
        let storeList = (1...scannerStore).map { "  - id: \($0)\n    name: Store \($0)\n    departments:\n\(layout)" }.joined(
            separator: "\n")
        try """
        id: soak
        broker: {url: "mqtt://127.0.0.1:\(port)"}
        database: soak.sqlite
        members: members.csv
        presence: {staleAfter: 5s, exitAfter: 10s, switchMargin: 4, switchDwell: 3s, visitGap: 1m}
        promos: {dwell: 3s, cooldown: 10m}
        stores:
        \(storeList)
        """.write(toFile: work + "/coordinator.yaml", atomically: true, encoding: .utf8)

        let broker = "mqtt://127.0.0.1:\(port)"
        processes.append(
            (
                "coordinator",
                try BenchProcess(
                    BenchProcess.besideBench("beacon-coordinator"),
                    [
                        "run", "--config", work + "/coordinator.yaml", "--health-interval", "1s", "--log-level", "warning",
                    ])
            ))
        let route = (1...min(departments, 3)).map { "\($0 * 10)" }.joined(separator: ",")
        for department in (1...min(departments, 3)).map({ $0 * 10 }) {
            processes.append(
                (
                    "scanner \(department)",
                    try BenchProcess(
                        BenchProcess.besideBench("beacon-scanner"),
                        [
                            "--store", "\(scannerStore)", "--department", "\(department)", "--broker", broker, "--source", "sim",
                            "--sim-route", route,
                        ])
                ))
        }
        processes.append(
            (
                "monitor",
                try BenchProcess(
                    BenchProcess.besideBench("beacon-monitor"),
                    [
                        "--store", "1", "--broker", broker, "--plain",
                    ])
            ))

        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .warning
        let watcher = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL(broker)), logger: logger)
        try watcher.start()
        guard await watcher.waitUntilConnected(timeout: .seconds(10)) else { throw BenchError("cannot reach the soak broker") }
        try watcher.subscribe(Topics().eventsFilter(store: nil), qos: .atLeastOnce)
        try watcher.subscribe(Topics().coordinatorHealth(id: "soak"), qos: .atMostOnce)
        let counters = SoakCounters()
        let watching = Task { [messages = watcher.messages] in
            for await message in messages { counters.record(message) }
        }
        defer { watching.cancel() }
        let load = try MQTTClient(configuration: MQTTConfiguration(broker: BrokerURL(broker), clientID: "soak-load"), logger: logger)
        try load.start()
        guard await load.waitUntilConnected(timeout: .seconds(10)) else { throw BenchError("cannot reach the soak broker") }

        print(
            "soak: \(stores) stores × \(departments) departments under load, \(members) members moving, plus 3 simulated scanners and a monitor; every \(every) for \(duration)"
        )
        print(
            "minute  " + processes.map { $0.name.padding(toLength: 24, withPad: " ", startingAt: 0) }.joined()
                + "sightings/s  events/s  lag p50/max")
        var walk = SoakWalk(members: members, stores: stores, departments: departments)
        let started = Measure.seconds()
        var nextReport = started + Double(interval.wholeMilliseconds) / 1000
        var cpuBefore = processes.map { $0.process.cpuSeconds ?? 0 }
        var sequence: UInt64 = 0
        var probeSequence: UInt64 = 0
        var probeDue = started + 5
        while Measure.seconds() - started < Double(total.wholeMilliseconds) / 1000 {
            let tick = Measure.seconds()
            sequence += 1
            let now = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
            for (node, sightings) in walk.step(at: now) {
                let batch = SightingBatch(node: node, boot: "soak", seq: sequence, sentAt: now, sightings: sightings)
                _ = try load.publish(
                    topic: Topics().sightings(node),
                    payload: WireCodec.encode(batch), qos: .atLeastOnce)
                counters.addSightings(sightings.count)
            }
            if tick >= probeDue {
                // A probe walks into store 1's first department and leaves by itself (exitAfter).
                probeSequence += 1
                probeDue = tick + 20
                let probe = Int(probeSequence - 1) % Self.probes
                let node = NodeAddress(store: 1, department: 10, node: "probe")!
                for step in 0..<4 {
                    let at = Timestamp(milliseconds: now.milliseconds + Int64(step) * 300)
                    let sighting = Sighting(
                        beacon: .iBeacon(uuid: BenchBeacons.uuid, major: 1, minor: UInt16(60000 + probe)), rssi: -55, count: 3,
                        txPower: -59, distance: 1, proximity: .near, lastSeen: at)
                    if step == 0 { counters.probeSent() }
                    _ = try load.publish(
                        topic: Topics().sightings(node),
                        payload: WireCodec.encode(
                            SightingBatch(
                                node: node, boot: "probe",
                                seq: probeSequence * 4 + UInt64(step), sentAt: at,
                                sightings: [sighting])), qos: .atLeastOnce)
                    try await Task.sleep(for: .milliseconds(300))
                }
            }
            if Measure.seconds() >= nextReport {
                let elapsed = Measure.seconds() - started
                let cpuNow = processes.map { $0.process.cpuSeconds ?? 0 }
                let seconds = Double(interval.wholeMilliseconds) / 1000
                let columns = zip(processes, zip(cpuNow, cpuBefore)).map { entry, cpu in
                    let rss = entry.process.residentBytes.map { "\($0 / 1_048_576) MB" } ?? "gone"
                    let share = Int(((cpu.0 - cpu.1) / seconds * 100).rounded())
                    return "\(rss) \(share) %".padding(toLength: 24, withPad: " ", startingAt: 0)
                }
                cpuBefore = cpuNow
                let window = counters.takeWindow()
                let lag = window.lags.isEmpty ? "n/a" : "\(window.lags.sorted()[window.lags.count / 2]) / \(window.lags.max()!) ms"
                print(
                    "\(Int(elapsed / 60))m\(String(format: "%02d", Int(elapsed) % 60))s  " + columns.joined()
                        + "\(Int(Double(window.sightings) / seconds))".padding(toLength: 13, withPad: " ", startingAt: 0)
                        + "\((Double(window.events) / seconds * 10).rounded() / 10)".padding(toLength: 10, withPad: " ", startingAt: 0)
                        + lag)
                nextReport += seconds
                if processes.contains(where: { !$0.process.isRunning }) {
                    throw BenchError("a process of the mesh stopped: \(processes.filter { !$0.process.isRunning }.map(\.name))")
                }
            }
            let wait = 0.5 - (Measure.seconds() - tick)
            if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
        }
        await load.disconnect(timeout: .seconds(2))
        await watcher.disconnect(timeout: .seconds(2))
    }
}

/// Members of the load walking through their store: each stays in a department for a while, moves on, now and
/// then leaves the store and comes back later.
struct SoakWalk {
    private var place: [Int?]
    private var until: [Int64]
    private let stores: Int
    private let departments: Int
    private var random = SystemRandomNumberGenerator()

    init(members: Int, stores: Int, departments: Int) {
        place = Array(repeating: nil, count: members)
        until = Array(repeating: 0, count: members)
        self.stores = stores
        self.departments = departments
    }

    /// One flush window of every department node: the sightings of the members in that department now.
    mutating func step(at now: Timestamp) -> [(NodeAddress, [Sighting])] {
        var byNode: [Int: [Sighting]] = [:]
        for member in place.indices {
            if now.milliseconds >= until[member] {
                // Half the time a new department for 20–80 s, else out of the store for 30–120 s.
                if place[member] == nil || Bool.random(using: &random) {
                    place[member] = Int.random(in: 0..<departments, using: &random)
                    until[member] = now.milliseconds + Int64.random(in: 20_000...80_000, using: &random)
                } else {
                    place[member] = nil
                    until[member] = now.milliseconds + Int64.random(in: 30_000...120_000, using: &random)
                }
            }
            guard let department = place[member] else { continue }
            let store = member % stores + 1
            let sighting = Sighting(
                beacon: .iBeacon(uuid: BenchBeacons.uuid, major: UInt16(store), minor: UInt16(member)),
                rssi: -60 - Double(member % 7), count: 4, txPower: -59, distance: 1.5, proximity: .near,
                lastSeen: now)
            byNode[store * 1000 + department, default: []].append(sighting)
        }
        return byNode.sorted { $0.key < $1.key }.map { key, sightings in
            (NodeAddress(store: UInt16(key / 1000), department: UInt16((key % 1000 + 1) * 10), node: "load")!, sightings)
        }
    }
}

/// What the soak hears, counted per report window.
final class SoakCounters: Sendable {
    private struct State {
        var sightings = 0
        var events = 0
        var lags: [Int] = []
        var probeSentAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    func addSightings(_ count: Int) { state.withLock { $0.sightings += count } }

    func probeSent() { state.withLock { $0.probeSentAt = .now } }

    func record(_ message: MQTTMessage) {
        guard message.topic.hasSuffix("/events") else { return }
        let received = message.receivedAt ?? .now
        let isProbe =
            (try? WireCodec.decodeEvent(message.payload)).map { event -> Bool in
                if case .arrived(let member, _, _, _, _, _) = event.kind { return member.id.hasPrefix("probe") }
                return false
            } ?? false
        state.withLock { state in
            state.events += 1
            if isProbe, let sent = state.probeSentAt {
                // Less the one-second arrival settling the contract asks for.
                state.lags.append(Int(((received - sent).inSeconds - 1) * 1000))
                state.probeSentAt = nil
            }
        }
    }

    /// The counts since the last call.
    func takeWindow() -> (sightings: Int, events: Int, lags: [Int]) {
        state.withLock { state in
            defer {
                state.sightings = 0
                state.events = 0
                state.lags = []
            }
            return (state.sightings, state.events, state.lags)
        }
    }
}

extension BenchProcess {
    /// Resident memory now (`VmRSS` of `/proc/PID/status`), in bytes; `nil` once the process is gone.
    var residentBytes: Int? {
        guard isRunning, let text = try? String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1024
    }
}
