import Testing

@testable import BeaconMeshCore

/// A store with three department nodes and a scripted member, driven by a manual clock.
struct StoreScript {
    static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
    static let phone = BeaconKey.iBeacon(uuid: uuid, major: 1, minor: 1)
    static let fob = BeaconKey.iBeacon(uuid: uuid, major: 1, minor: 2)
    static let guest = BeaconKey.iBeacon(uuid: uuid, major: 7, minor: 7)

    var engine: PresenceEngine
    var now = Timestamp(milliseconds: 1_763_769_600_000)
    var outputs: [PresenceEngine.Output] = []
    var sequence: [UInt16: UInt64] = [:]
    var random = SplitMix64(seed: 42)
    /// How far each department node's clock is from ours (its `sentAt` and `lastSeen` carry it).
    var nodeClock: [UInt16: Duration] = [:]

    init(
        rules: PresenceRules = StoreScript.fastRules, overrides: [UInt16: PresenceRules] = [:],
        minRSSI: [UInt16: Double] = [:], neighbours: [UInt16: Set<UInt16>] = [:]
    ) {
        let layouts = [10, 20, 30].map {
            DepartmentLayout(
                id: UInt16($0), rules: overrides[UInt16($0)] ?? rules, minRSSI: minRSSI[UInt16($0)], neighbours: neighbours[UInt16($0)])
        }
        engine = PresenceEngine(rules: rules, stores: [1: layouts])
        _ = engine.setDirectory([StoreScript.phone: "ana", StoreScript.fob: "ana"])
    }

    static var fastRules: PresenceRules {
        var rules = PresenceRules()
        rules.staleAfter = .seconds(3)
        rules.exitAfter = .seconds(10)
        rules.switchMargin = 4
        rules.switchDwell = .seconds(3)
        rules.visitGap = .seconds(60)
        return rules
    }

    static func node(_ department: UInt16) -> NodeAddress { NodeAddress(store: 1, department: department, node: "a")! }

    /// Every node in `rssi` sends one batch with one sighting of `beacon`.
    mutating func batch(_ rssi: [UInt16: Double], beacon: BeaconKey = StoreScript.phone, lost: [UInt16] = []) {
        for department in Set(rssi.keys).union(lost).sorted() {
            sequence[department, default: 0] += 1
            let sightings =
                rssi[department].map {
                    [
                        Sighting(
                            beacon: beacon, rssi: $0, count: 4, txPower: -59, distance: 2, proximity: .near,
                            lastSeen: now + (nodeClock[department] ?? .zero))
                    ]
                } ?? []
            let batch = SightingBatch(
                node: StoreScript.node(department), boot: "boot\(department)",
                seq: sequence[department]!, sentAt: now + (nodeClock[department] ?? .zero), sightings: sightings,
                lost: lost.contains(department) ? [beacon] : [])
            outputs += engine.ingest(batch, at: now).outputs
        }
    }

    /// Lets `duration` pass in 500 ms steps, with the same readings each step (none if `rssi` is empty).
    mutating func hold(_ duration: Duration, _ rssi: [UInt16: Double] = [:], jitter: Double = 0, beacon: BeaconKey = StoreScript.phone) {
        let steps = Int(duration.wholeMilliseconds / 500)
        for _ in 0..<steps {
            now = now + .milliseconds(500)
            if !rssi.isEmpty {
                batch(rssi.mapValues { $0 + (jitter > 0 ? random.uniform(-jitter, jitter) : 0) }, beacon: beacon)
            }
            outputs += engine.tick(at: now)
        }
    }

    /// A new engine holding only this one's saved visits, its clock `downtime` later: the coordinator restarted.
    func restarted(after downtime: Duration) -> StoreScript {
        var restarted = StoreScript()
        restarted.engine.restore(engine.visits)
        restarted.now = now + downtime
        return restarted
    }

    /// The member-facing outputs only, as short words: `arrived 10`, `moved 10→20`, `left 20`.
    var story: [String] {
        outputs.compactMap {
            switch $0 {
            case .arrived(_, _, let department, _, _): return "arrived \(department)"
            case .resumed(_, _, let department, _, _): return "resumed \(department)"
            case .moved(_, _, let from, let to, _, _): return "moved \(from)→\(to)"
            case .left(_, _, let department, _, _): return "left \(department)"
            default: return nil
            }
        }
    }
}

@Suite("Presence engine")
struct PresenceEngineTests {
    @Test("a member walking Clothing → Housewares → exit is greeted once, moves once, leaves once")
    func walkThroughStore() {
        var script = StoreScript()
        script.hold(.seconds(5), [10: -55, 20: -80])
        script.hold(.seconds(6), [10: -80, 20: -55])
        script.hold(.seconds(15))
        #expect(script.story == ["arrived 10", "moved 10→20", "left 20"])
    }

    @Test("the first batch of a far node does not decide the arrival department")
    func arrivalSettles() {
        var script = StoreScript()
        script.batch([20: -85])
        script.hold(.seconds(3), [10: -55, 20: -85])
        #expect(script.story == ["arrived 10"])
    }

    @Test("readings 2 dB apart flickering between two departments produce no move")
    func flickerTwoDecibels() {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -60, 20: -70])
        for _ in 0..<20 {
            script.hold(.seconds(1), [10: -62, 20: -60])
            script.hold(.seconds(1), [10: -60, 20: -62])
        }
        #expect(script.story == ["arrived 10"])
    }

    @Test("a member standing on a boundary with ±6 dB jitter at 8 readings/s never moves")
    func boundaryJitter() {
        var script = StoreScript(rules: PresenceRules())
        var arrivedAt: Timestamp?
        for _ in 0..<(8 * 120) {
            script.now = script.now + .milliseconds(125)
            script.batch([10: -65 + script.random.uniform(-6, 6), 20: -65 + script.random.uniform(-6, 6)])
            script.outputs += script.engine.tick(at: script.now)
            if arrivedAt == nil, !script.story.isEmpty { arrivedAt = script.now }
        }
        #expect(script.story.count == 1)
        #expect(script.story.first?.hasPrefix("arrived") == true)
    }

    @Test("a decisive move (a 25 dB swing, more than three times switchMargin) is reported within 1.5 s")
    func quickRealMove() {
        var script = StoreScript(rules: PresenceRules())
        script.hold(.seconds(5), [10: -55, 20: -80], jitter: 3)
        let movedFrom = script.now
        var movedAt: Timestamp?
        for _ in 0..<(8 * 10) where movedAt == nil {
            script.now = script.now + .milliseconds(125)
            script.batch([10: -80 + script.random.uniform(-3, 3), 20: -55 + script.random.uniform(-3, 3)])
            script.outputs += script.engine.tick(at: script.now)
            if script.story.contains("moved 10→20") { movedAt = script.now }
        }
        let latency = movedAt.map { $0 - movedFrom }
        #expect(latency != nil)
        #expect(latency.map { $0 <= .milliseconds(1_500) } == true, "moved after \(String(describing: latency))")
    }

    @Test(
        "a move gathers evidence at the size of its lead: 8 dB (twice switchMargin) takes half of switchDwell, 4.5 dB the whole dwell, 3 dB never",
        arguments: [(8.0, 1.5, 2.25), (4.5, 3.0, 4.5), (3.0, nil, nil)] as [(Double, Double?, Double?)])
    func moveWaitsForEvidence(lead: Double, earliest: Double?, latest: Double?) {
        var script = StoreScript(rules: PresenceRules())
        script.hold(.seconds(5), [10: -60, 20: -60 - lead])
        let movedFrom = script.now
        var movedAt: Timestamp?
        for _ in 0..<(8 * 10) where movedAt == nil {
            script.now = script.now + .milliseconds(125)
            script.batch([10: -60 - lead, 20: -60])
            script.outputs += script.engine.tick(at: script.now)
            if script.story.contains("moved 10→20") { movedAt = script.now }
        }
        guard let earliest, let latest else {
            #expect(movedAt == nil, "a lead under switchMargin never moves the member")
            return
        }
        // The smoothing takes about a second to show the new lead in full; the evidence gathers from then on.
        let latency = movedAt.map { ($0 - movedFrom).inSeconds }
        #expect(latency.map { $0 >= earliest && $0 <= latest + 0.5 } == true, "moved after \(String(describing: latency)) s")
    }

    @Test("a node that goes offline stops counting at once; batches it numbered before its will never count again")
    func nodeDiesMidVisit() {
        var script = StoreScript()
        script.hold(.seconds(4), [10: -55, 20: -75])
        script.outputs += script.engine.nodeStatusChanged(StoreScript.node(10), state: .offline, boot: "boot10", at: script.now)
        #expect(script.story == ["arrived 10", "moved 10→20"])
        // Redelivered batches of the dead node's boot, numbered before its will.
        script.sequence[10]! -= 3
        script.hold(.seconds(1), [10: -50, 20: -75])
        #expect(script.story == ["arrived 10", "moved 10→20"])
        #expect(script.engine.counters.fromOfflineNodes == 2)
    }

    @Test("a node heard again after its will (a reconnect whose resent batches overtake its online status) counts again")
    func nodeReconnectsWithSameBoot() {
        var script = StoreScript()
        script.hold(.seconds(4), [10: -55, 20: -75])
        script.outputs += script.engine.nodeStatusChanged(StoreScript.node(10), state: .offline, boot: "boot10", at: script.now)
        #expect(script.story == ["arrived 10", "moved 10→20"])
        script.hold(.seconds(4), [10: -50, 20: -75])
        #expect(script.story == ["arrived 10", "moved 10→20", "moved 20→10"])
        let announcements = script.outputs.filter {
            if case .node(StoreScript.node(10), .online, _) = $0 { return true } else { return false }
        }
        #expect(announcements.count == 2, "online when first heard, and again when heard after its will")
        #expect(script.engine.counters.fromOfflineNodes == 0)
        // Its online status, coming after, changes nothing more.
        #expect(script.engine.nodeStatusChanged(StoreScript.node(10), state: .online, boot: "boot10", at: script.now).isEmpty)
    }

    @Test("a node's retained status delivered again (a re-subscription after a reconnect) keeps its boot's order: no false gap, no replay")
    func retainedStatusAgain() {
        var script = StoreScript()
        script.hold(.seconds(2), [10: -55])
        script.engine.restoreNode(StoreScript.node(10), state: .online, boot: "boot10")
        script.hold(.seconds(1), [10: -55])
        #expect(script.engine.counters.gaps == 0)
        script.sequence[10]! -= 1
        script.batch([10: -55])
        #expect(script.engine.counters.duplicates == 1, "an old batch after the status is still recognised")
    }

    @Test("an offline node's readings never keep a member present")
    func offlineNodeDoesNotKeepPresence() {
        var script = StoreScript()
        script.hold(.seconds(4), [10: -55])
        script.outputs += script.engine.nodeStatusChanged(StoreScript.node(10), state: .offline, boot: "boot10", at: script.now)
        script.hold(.seconds(11))
        #expect(script.story == ["arrived 10", "left 10"])
    }

    @Test("a lost list removes the reading at once")
    func lostTakesEffect() {
        var script = StoreScript()
        script.hold(.seconds(4), [10: -55, 20: -70])
        script.batch([20: -70], lost: [10])
        #expect(script.story == ["arrived 10", "moved 10→20"])
    }

    @Test("two beacons of one member are one presence")
    func phoneAndFob() {
        var script = StoreScript()
        for _ in 0..<8 {
            script.now = script.now + .milliseconds(500)
            script.batch([10: -60], beacon: StoreScript.phone)
            script.batch([10: -58], beacon: StoreScript.fob)
            script.outputs += script.engine.tick(at: script.now)
        }
        // The phone stops; the fob alone keeps the member present.
        script.hold(.seconds(12), [10: -58].mapValues { $0 })
        #expect(script.story == ["arrived 10"])
        #expect(script.engine.presentMembers(store: 1).map(\.member) == ["ana"])
    }

    @Test("a member who leaves and returns within visitGap is not greeted twice")
    func returnWithinVisitGap() {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -55])
        script.hold(.seconds(12))
        script.hold(.seconds(3), [30: -55])
        #expect(script.story == ["arrived 10", "left 10", "resumed 30"])
    }

    @Test("a member who returns after visitGap starts a new visit")
    func returnAfterVisitGap() {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -55])
        script.hold(.seconds(75))
        script.hold(.seconds(3), [10: -55])
        #expect(script.story == ["arrived 10", "left 10", "arrived 10"])
    }

    @Test("the dwell of a left visit spans the whole visit")
    func dwellSpansVisit() {
        var script = StoreScript()
        script.hold(.seconds(20), [10: -55])
        script.hold(.seconds(12))
        let dwell = script.outputs.compactMap { output -> Duration? in
            if case .left(_, _, _, let dwell, _) = output { return dwell }
            return nil
        }
        #expect(dwell.count == 1)
        #expect(dwell.first.map { $0 >= .seconds(18) && $0 <= .seconds(20) } == true)
    }

    @Test("duplicated and out-of-order batches are ignored and counted; gaps count the seqs still missing")
    func batchOrdering() {
        var engine = PresenceEngine(rules: StoreScript.fastRules, stores: [1: [DepartmentLayout(id: 10, rules: StoreScript.fastRules)]])
        let now = Timestamp(milliseconds: 1_000_000)
        func batch(_ seq: UInt64) -> SightingBatch {
            SightingBatch(node: StoreScript.node(10), boot: "b", seq: seq, sentAt: now, sightings: [])
        }
        #expect(engine.ingest(batch(1), at: now).verdict == .applied)
        #expect(engine.ingest(batch(1), at: now).verdict == .duplicate)
        #expect(engine.ingest(batch(4), at: now).verdict == .applied)
        #expect(engine.counters.gaps == 2)  // 2 and 3
        #expect(engine.ingest(batch(3), at: now).verdict == .late)
        #expect(engine.counters.duplicates == 1)
        #expect(engine.counters.late == 1)
        #expect(engine.counters.gaps == 1, "3 was late, not lost")
        #expect(engine.ingest(batch(3), at: now).verdict == .late)
        #expect(engine.ingest(batch(1), at: now).verdict == .late)
        #expect(engine.counters.gaps == 1, "redelivered batches fill no gap")
        #expect(engine.ingest(batch(2), at: now).verdict == .late)
        #expect(engine.counters.gaps == 0)
        #expect(engine.ingest(batch(1_000), at: now).verdict == .applied)
        #expect(engine.counters.gaps == 995)
        #expect(engine.ingest(batch(999), at: now).verdict == .late)
        #expect(engine.ingest(batch(5), at: now).verdict == .late)
        #expect(engine.counters.gaps == 994, "only the newest 256 missing seqs are remembered")
        // A new boot numbers afresh: the old boot's missing seqs are forgotten, and stay counted.
        let rebooted = SightingBatch(node: StoreScript.node(10), boot: "c", seq: 1, sentAt: now, sightings: [])
        #expect(engine.ingest(rebooted, at: now).verdict == .applied)
        #expect(engine.counters.gaps == 994)
        let other = SightingBatch(node: NodeAddress(store: 2, department: 10, node: "a")!, boot: "b", seq: 1, sentAt: now, sightings: [])
        #expect(engine.ingest(other, at: now).verdict == .unknownStore)
    }

    @Test("guests count in occupancy, never in events")
    func guestsOnlyInOccupancy() {
        var script = StoreScript()
        for _ in 0..<6 {
            script.now = script.now + .milliseconds(500)
            script.batch([20: -60], beacon: StoreScript.guest)
            script.outputs += script.engine.tick(at: script.now)
        }
        #expect(script.story.isEmpty)
        #expect(script.engine.guestCounts(store: 1, at: script.now) == [20: 1])
    }

    @Test("a department may override presence rules: a fitting room keeps members longer")
    func departmentOverride() {
        var slow = StoreScript.fastRules
        slow.exitAfter = .seconds(30)
        var script = StoreScript(overrides: [30: slow])
        script.hold(.seconds(3), [30: -55])
        script.hold(.seconds(15))
        #expect(script.story == ["arrived 30"])
        script.hold(.seconds(20))
        #expect(script.story == ["arrived 30", "left 30"])
    }

    @Test("visits restored after a restart continue without a second greeting")
    func restoreAfterRestart() {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -55])
        var restarted = script.restarted(after: .seconds(2))
        restarted.hold(.seconds(3), [10: -55])
        #expect(restarted.story.isEmpty)
        #expect(restarted.engine.presentMembers(store: 1).map(\.member) == ["ana"])
    }

    @Test(
        "after a long downtime, a member heard again is greeted for a new visit, whether a tick or a reading comes first",
        arguments: [true, false])
    func longDowntime(tickFirst: Bool) {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -55])
        // Down for two hours: far beyond exitAfter (10 s) and visitGap (60 s).
        var restarted = script.restarted(after: .seconds(7200))
        if tickFirst { restarted.outputs += restarted.engine.tick(at: restarted.now) }
        restarted.batch([10: -55])
        restarted.hold(.seconds(3), [10: -55])
        #expect(restarted.story == ["left 10", "arrived 10"])
        let visit = restarted.engine.visit(of: "ana")
        #expect(visit?.arrivedAt ?? script.now >= script.now + .seconds(7200), "a new visit, not the old one continued")
        if case .left(_, _, _, let dwell, _)? = restarted.outputs.first(where: { if case .left = $0 { true } else { false } }) {
            #expect(dwell <= .seconds(3), "the old visit's dwell ends at its last reading")
        }
    }

    @Test("after a short downtime, a member heard again within visitGap of leaving continues the visit")
    func shortDowntime() {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -55])
        // Down for 30 s: gone 10 s after the last reading, back 20 s later — within visitGap (60 s).
        var restarted = script.restarted(after: .seconds(30))
        restarted.batch([10: -55])
        restarted.hold(.seconds(3), [10: -55])
        #expect(restarted.story == ["left 10", "resumed 10"])
    }

    @Test("a member removed from the directory disappears at once")
    func forgetMember() {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -55])
        let outputs = script.engine.setDirectory([:])
        #expect(outputs == [.presenceChanged(store: 1)])
        #expect(script.engine.presentMembers(store: 1).isEmpty)
    }
}
