import ArgumentParser
import BeaconMeshCore

/// Pushes sighting batches through the presence engine in-process: sightings per second on one core, and memory
/// per tracked beacon, with many beacons across many stores.
struct EngineBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine", abstract: "Presence engine: sightings/s on one core and bytes per tracked beacon.")

    @Option(help: "Stores.")
    var stores: Int = 1_000

    @Option(help: "Beacons in all (spread evenly over the stores; every tenth is a guest).")
    var beacons: Int = 100_000

    @Option(help: "Departments per store (one node each).")
    var departments: Int = 10

    @Option(help: "Rounds: in each, every node sends one batch with the beacons it hears.")
    var rounds: Int = 60

    @Flag(help: "Survey every store first (a fit learnt from a synthetic walk of its departments): members are decided from it.")
    var surveyed = false

    @Option(
        help:
            "Instead, this many pairs of passes in this process, alternating uncalibrated and surveyed, and the median ratio of their throughputs (memory: the runs without it)."
    )
    var compare: Int = 0

    func run() throws {
        guard compare > 0 else {
            try pass(surveyed: surveyed, printing: true)
            return
        }
        var ratios: [Double] = []
        for pair in 1...compare {
            let plain = try pass(surveyed: false, printing: false)
            let fitted = try pass(surveyed: true, printing: false)
            ratios.append(fitted / plain)
            print(
                "pair \(pair): uncalibrated \(Measure.grouped(plain)), surveyed \(Measure.grouped(fitted)) sightings/s on one core: \((fitted / plain * 1000).rounded() / 1000)×"
            )
        }
        let median = ratios.sorted()[ratios.count / 2]
        print("engine comparison: surveyed ÷ uncalibrated, median of \(compare) pairs: \((median * 1000).rounded() / 1000)×")
    }

    /// One pass: an engine made, fed and measured; returns its sightings per second of CPU.
    @discardableResult
    func pass(surveyed: Bool, printing: Bool) throws -> Double {
        let uuid = BenchBeacons.uuid
        var layout: [UInt16: [DepartmentLayout]] = [:]
        for store in 0..<stores {
            layout[UInt16(store)] = (0..<departments).map { DepartmentLayout(id: UInt16($0), rules: PresenceRules()) }
        }
        var engine = PresenceEngine(rules: PresenceRules(), stores: layout)
        var owners: [BeaconKey: String] = [:]
        let perStore = beacons / stores
        var keys: [[BeaconKey]] = []
        for store in 0..<stores {
            var storeKeys: [BeaconKey] = []
            for index in 0..<perStore {
                let key = BeaconKey.iBeacon(uuid: uuid, major: UInt16(store), minor: UInt16(index))
                storeKeys.append(key)
                if index % 10 != 0 { owners[key] = "m\(store)-\(index)" }
            }
            keys.append(storeKeys)
        }

        // Each beacon is heard by its own department's node strongly and by the next one faintly.
        var batchesByRound: [[SightingBatch]] = []
        let origin = Timestamp(milliseconds: 1_800_000_000_000)
        let roundsPrepared = min(rounds, 4)
        for round in 0..<roundsPrepared {
            var batches: [SightingBatch] = []
            let now = origin + .milliseconds(Int64(round) * 500)
            for store in 0..<stores {
                for department in 0..<departments {
                    let node = NodeAddress(store: UInt16(store), department: UInt16(department), node: "a")!
                    var sightings: [Sighting] = []
                    for (index, key) in keys[store].enumerated()
                    where index % departments == department || (index + 1) % departments == department {
                        let strong = index % departments == department
                        sightings.append(
                            Sighting(
                                beacon: key, rssi: strong ? -58 : -80, count: 4, txPower: -59,
                                distance: strong ? 0.9 : 11, proximity: strong ? .near : .far, lastSeen: now))
                    }
                    batches.append(SightingBatch(node: node, boot: "b", seq: 0, sentAt: now, sightings: sightings))
                }
            }
            batchesByRound.append(batches)
        }

        if surveyed {
            let fit = try SurveyFitBenchmark.syntheticFit(departments: departments, seconds: 60)
            for store in 0..<stores {
                var mine = fit
                mine.store = UInt16(store)
                engine.setSurvey(mine, store: UInt16(store))
            }
            if printing { print("surveyed: every store decided from a fit of \(fit.encoded().count) bytes (\(fit.nodes.count) nodes)") }
        }
        // Memory is measured around the engine alone: the directory, the fits and the prepared batches are made first.
        let baseline = Measure.privateResidentBytes()
        _ = engine.setDirectory(owners)
        var sightings = 0
        var sequence: UInt64 = 0
        let cpuStart = Measure.threadCPUSeconds()
        for round in 0..<rounds {
            sequence += 1
            let now = origin + .milliseconds(Int64(round) * 500)
            for var batch in batchesByRound[round % roundsPrepared] {
                batch.seq = sequence
                batch.sentAt = now
                for index in batch.sightings.indices { batch.sightings[index].lastSeen = now }
                sightings += batch.sightings.count
                _ = engine.ingest(batch, at: now)
            }
            _ = engine.tick(at: now)
        }
        let cpu = Measure.threadCPUSeconds() - cpuStart
        let tracked = engine.trackedCount
        let grown = Measure.privateResidentBytes() - baseline
        guard printing else { return Double(sightings) / cpu }
        print(
            "engine benchmark: \(stores) stores × \(departments) departments, \(Measure.grouped(Double(beacons))) beacons, \(rounds) rounds"
        )
        print(
            "  throughput         \(Measure.grouped(Double(sightings) / cpu)) sightings/s on one core (\(Measure.grouped(Double(sightings))) sightings in \((cpu * 1000).rounded() / 1000) s CPU)"
        )
        print(
            "  memory             \(tracked) tracked people; \(Measure.grouped(Double(grown) / Double(max(tracked, 1)))) bytes per tracked beacon (private memory the engine added)"
        )
        print(
            "  counters           batches \(engine.counters.batches), present members \(stores > 0 ? engine.presentMembers(store: 0).count : 0) in store 0"
        )
        return Double(sightings) / cpu
    }
}
