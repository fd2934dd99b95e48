import ArgumentParser
import BeaconMeshCore

/// The presence engine in-process with a crowd of guest beacons (a million by default): what one tick and one count
/// of guests per store cost while the crowd is tracked, goes stale and expires, and the memory per tracked beacon.
///
/// The crowd is heard once, over `feed` seconds of simulated time (each guest strongly by its department's node,
/// every other one also faintly by the next department's), and then only ticked every 100 ms, as the coordinator
/// does: its readings go stale after `staleAfter` (5 s) and the guests are dropped after `exitAfter` (30 s). Every
/// simulated second the guest counts of every store are taken too, as a snapshot does. Times are the CPU time of
/// this thread.
struct CrowdBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crowd",
        abstract: "Presence engine with a million guest beacons: CPU per tick and per guest count, bytes per tracked beacon.")

    @Option(help: "Guest beacons in the crowd.")
    var guests: Int = 1_000_000

    @Option(help: "Stores (the guests are spread evenly over them).")
    var stores: Int = 100

    @Option(help: "Departments per store (one node each).")
    var departments: Int = 10

    @Option(help: "Members in the directory (never heard: they only make the engine's member tables that size).")
    var members: Int = 5_000

    @Option(help: "Seconds of simulated time over which the crowd is heard.")
    var feed: Int = 5

    @Option(help: "Seconds of simulated time ticked after the crowd was heard.")
    var seconds: Int = 70

    func validate() throws {
        guard guests > 0, (1...1_000).contains(stores), (1...100).contains(departments), members >= 0, feed > 0, seconds > 0 else {
            throw ValidationError("--guests, --feed and --seconds must be positive, --stores 1…1000, --departments 1…100")
        }
    }

    func run() throws {
        var layout: [UInt16: [DepartmentLayout]] = [:]
        for store in 1...stores {
            layout[UInt16(store)] = (0..<departments).map { DepartmentLayout(id: UInt16($0), rules: PresenceRules()) }
        }
        var engine = PresenceEngine(rules: PresenceRules(), stores: layout)
        var owners: [BeaconKey: String] = [:]
        for index in 0..<members {
            owners[.iBeacon(uuid: BenchBeacons.uuid, major: 1, minor: UInt16(index % 65_536))] = "m\(index)"
        }
        _ = engine.setDirectory(owners)

        // Guest `index` belongs to store `index % stores + 1`, department `(index / stores) % departments`.
        func guest(_ index: Int) -> BeaconKey {
            .iBeacon(uuid: BenchBeacons.uuid, major: UInt16(20_000 + index / 65_536), minor: UInt16(index % 65_536))
        }
        let origin = Timestamp(milliseconds: 1_800_000_000_000)
        let perNode = (guests + stores * departments - 1) / (stores * departments)
        let batchSize = 500
        let batchCount = stores * departments * ((perNode + perNode / 2 + batchSize - 1) / batchSize)
        let feedMilliseconds = Int64(feed) * 1_000

        // Memory is measured around the engine alone: its directory is made first; batches are made one at a time.
        let baseline = Measure.privateResidentBytes()
        var batchNumber = 0
        var sightingsFed = 0
        let feedCPU = Measure.threadCPUSeconds()
        for store in 0..<stores {
            for department in 0..<departments {
                let node = NodeAddress(store: UInt16(store + 1), department: UInt16(department), node: "a")!
                let previous = (department + departments - 1) % departments
                var sightings: [Sighting] = []
                var sequence: UInt64 = 0
                func flush() {
                    let now = origin + .milliseconds(Int64(batchNumber) * feedMilliseconds / Int64(max(batchCount, 1)))
                    sequence += 1
                    for index in sightings.indices { sightings[index].lastSeen = now }
                    _ = engine.ingest(SightingBatch(node: node, boot: "crowd", seq: sequence, sentAt: now, sightings: sightings), at: now)
                    sightingsFed += sightings.count
                    batchNumber += 1
                    sightings.removeAll(keepingCapacity: true)
                }
                for round in 0..<perNode {
                    // Its own guests strongly; every other guest of the previous department faintly.
                    let own = store + stores * (department + departments * round)
                    if own < guests {
                        sightings.append(
                            Sighting(
                                beacon: guest(own), rssi: -60, count: 4, txPower: -59, distance: 1.2,
                                proximity: .near, lastSeen: origin))
                    }
                    let neighbour = store + stores * (previous + departments * round)
                    if round % 2 == 0, neighbour < guests {
                        sightings.append(
                            Sighting(
                                beacon: guest(neighbour), rssi: -82, count: 2, txPower: -59, distance: 14,
                                proximity: .far, lastSeen: origin))
                    }
                    if sightings.count >= batchSize { flush() }
                }
                if !sightings.isEmpty { flush() }
            }
        }
        let feedSeconds = Measure.threadCPUSeconds() - feedCPU
        let tracked = engine.trackedCount
        let grown = Measure.privateResidentBytes() - baseline

        // Ticks every 100 ms from the end of the feed; guest counts every simulated second.
        let feedEnd = origin + .milliseconds(feedMilliseconds)
        var ticks: [(at: Int64, cpu: Double)] = []
        var counts: [(at: Int64, cpu: Double, guests: Int)] = []
        for step in 0...(seconds * 10) {
            let now = feedEnd + .milliseconds(Int64(step) * 100)
            let before = Measure.threadCPUSeconds()
            _ = engine.tick(at: now)
            ticks.append((Int64(step) * 100, Measure.threadCPUSeconds() - before))
            if step % 10 == 0 {
                let countStart = Measure.threadCPUSeconds()
                let byStore = engine.guestCountsByStore(at: now)
                let cpu = Measure.threadCPUSeconds() - countStart
                counts.append((Int64(step) * 100, cpu, byStore.values.reduce(0) { $0 + $1.values.reduce(0, +) }))
            }
        }

        func milliseconds(_ seconds: Double) -> String { "\((seconds * 1e5).rounded() / 100) ms" }
        func summary(_ values: [Double]) -> String {
            guard !values.isEmpty else { return "n/a" }
            let sorted = values.sorted()
            return
                "p50 \(milliseconds(sorted[sorted.count / 2])), p99 \(milliseconds(sorted[min(sorted.count - 1, sorted.count * 99 / 100)])), max \(milliseconds(sorted.last!))"
        }
        let worstTick = ticks.max { $0.cpu < $1.cpu }!
        print(
            "crowd benchmark: \(Measure.grouped(Double(guests))) guest beacons over \(stores) stores × \(departments) departments (\(Measure.grouped(Double(sightingsFed))) sightings in \(Measure.grouped(Double(batchNumber))) batches over \(feed) s), \(Measure.grouped(Double(members))) members in the directory"
        )
        print(
            "  feed               \(Measure.grouped(Double(sightingsFed) / feedSeconds)) sightings/s on one core while the crowd is heard")
        print(
            "  memory             \(Measure.grouped(Double(tracked))) tracked; \(Measure.grouped(Double(grown) / Double(max(tracked, 1)))) bytes per tracked beacon (private memory the engine added)"
        )
        print("  tick               CPU per engine tick, ticks every 100 ms for \(seconds) s after the feed: \(summary(ticks.map(\.cpu)))")
        print(
            "                     worst at +\(Double(worstTick.at) / 1000) s; all ticks together \(milliseconds(ticks.reduce(0) { $0 + $1.cpu })) (readings go stale at +\(5 - feed)…5 s, guests expire at +\(30 - feed)…30 s)"
        )
        print(
            "  tick, quiet        CPU per tick from +\(feed + 1) s to +\(30 - feed - 1) s (nothing due): \(summary(ticks.filter { $0.at > Int64(feed + 1) * 1000 && $0.at < Int64(30 - feed - 1) * 1000 }.map(\.cpu)))"
        )
        print("  guest counts       CPU per guestCountsByStore (every store, every second): \(summary(counts.map(\.cpu)))")
        print(
            "                     guests counted at +0 s: \(Measure.grouped(Double(counts.first?.guests ?? 0))), at +\(seconds) s: \(Measure.grouped(Double(counts.last?.guests ?? 0))); tracked at the end: \(Measure.grouped(Double(engine.trackedCount)))"
        )
    }
}
