import Testing

@testable import BeaconMeshCore

/// The engine keeps guest counts, the members present in each store, the people tracked and its deadlines up to date
/// as inputs come, instead of walking everyone. These tests drive it with seeded random inputs — sightings heard late,
/// `lost` lists, nodes going offline and back, silences, directory changes, phones ranging, restarts and a clock
/// set back — and after every step require the answers a walk over every guest and member gives.
@Suite("Presence engine incremental counts")
struct PresenceEngineIncrementalTests {
    private static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
    private static let stores: [UInt16] = [1, 2, 3]
    private static let departments: [UInt16] = [10, 20, 30]

    /// Guests: beacons of store 9; members' beacons: store 1, two per member at first.
    private static let guestBeacons = (0..<40).map { BeaconKey.iBeacon(uuid: uuid, major: 9, minor: UInt16($0)) }
    private static let memberBeacons = (0..<16).map { BeaconKey.iBeacon(uuid: uuid, major: 1, minor: UInt16($0)) }

    /// A walk over every guest: each counts in each store where it has a fresh reading, in the department of the
    /// strongest (then nearest, then lowest department; the first of equals).
    private static func walkedGuestCounts(_ engine: PresenceEngine, at now: Int64) -> [UInt16: [UInt16: Int]] {
        var counts: [UInt16: [UInt16: Int]] = [:]
        engine.guests.forEachGuest { _, readings in
            var best: [UInt16: PresenceEngine.Reading] = [:]
            for reading in readings
            where now - reading.lastSeen < engine.rules(store: reading.store, department: reading.department).staleAfter.wholeMilliseconds {
                guard let incumbent = best[reading.store] else {
                    best[reading.store] = reading
                    continue
                }
                let stronger = reading.rssi > incumbent.rssi
                let nearer = reading.rssi == incumbent.rssi && reading.proximity < incumbent.proximity
                let lower =
                    reading.rssi == incumbent.rssi && reading.proximity == incumbent.proximity && reading.department < incumbent.department
                if stronger || nearer || lower { best[reading.store] = reading }
            }
            for (store, reading) in best { counts[store, default: [:]][reading.department, default: 0] += 1 }
        }
        return counts
    }

    /// A walk over every visit: the open ones by store, newest arrival first.
    private static func walkedPresentMembers(_ engine: PresenceEngine, in stores: Set<UInt16>? = nil) -> [UInt16: [PresenceEngine.Visit]] {
        var byStore: [UInt16: [PresenceEngine.Visit]] = [:]
        for visit in engine.visits where visit.leftAt == nil && (stores?.contains(visit.store) ?? true) {
            byStore[visit.store, default: []].append(visit)
        }
        return byStore.mapValues { $0.sorted { ($0.arrivedAt, $0.member) > ($1.arrivedAt, $1.member) } }
    }

    /// A walk over every member and guest: members heard lately or with a visit, and guests.
    private static func walkedTrackedCount(_ engine: PresenceEngine) -> Int {
        var guests = 0
        engine.guests.forEachGuest { _, _ in guests += 1 }
        return engine.members.filter { !$0.readings.isEmpty || $0.visit != nil }.count + guests
    }

    /// Every answer the engine keeps up to date, against the walks, at `now` and at times around it.
    private static func expectSameAsWalks(_ engine: PresenceEngine, at now: Timestamp, step: Int, random: inout SplitMix64) -> Bool {
        let later = now + .milliseconds(Int64(random.next() % 8_000))
        let earlier = now - .milliseconds(Int64(random.next() % 3_000) + 1)
        for time in [now, later, earlier] {
            let walked = walkedGuestCounts(engine, at: time.milliseconds)
            let kept = engine.guestCountsByStore(at: time)
            #expect(kept == walked, "step \(step): guests at \(time.milliseconds - now.milliseconds) ms")
            if kept != walked { return false }
        }
        let walked = walkedGuestCounts(engine, at: now.milliseconds)
        for store in stores + [4] {
            #expect(engine.guestCounts(store: store, at: now) == walked[store] ?? [:], "step \(step): guests of store \(store)")
        }
        #expect(engine.presentMembersByStore() == walkedPresentMembers(engine), "step \(step): members present")
        #expect(
            engine.presentMembersByStore(in: [1, 3]) == walkedPresentMembers(engine, in: [1, 3]), "step \(step): members present in 1 and 3"
        )
        #expect(engine.presentMembers(store: 2) == walkedPresentMembers(engine)[2] ?? [], "step \(step): members present in 2")
        #expect(engine.trackedCount == walkedTrackedCount(engine), "step \(step): tracked")
        var guestsWithoutReadings = 0
        engine.guests.forEachGuest { _, readings in if readings.isEmpty { guestsWithoutReadings += 1 } }
        #expect(guestsWithoutReadings == 0, "step \(step): a guest without readings is forgotten")
        return engine.guestCountsByStore(at: now) == walked
    }

    /// Ticks `engine` at `now` and checks what the walk of the guests says: every guest with a reading
    /// `exitAfter` old loses it, and the stores of those guests come last, in order, as changed.
    private static func tick(_ engine: inout PresenceEngine, at now: Timestamp, step: Int) -> [PresenceEngine.Output] {
        let exitAfter = engine.rules(store: 0, department: 0).exitAfter.wholeMilliseconds
        var expected: Set<UInt16> = []
        engine.guests.forEachGuest { _, readings in
            if readings.contains(where: { now.milliseconds - $0.lastSeen >= exitAfter }) { expected.formUnion(readings.map(\.store)) }
        }
        let outputs = engine.tick(at: now)
        let storesChanged = expected.sorted().map { PresenceEngine.Output.presenceChanged(store: $0) }
        #expect(Array(outputs.suffix(storesChanged.count)) == storesChanged, "step \(step): guests' stores changed")
        engine.guests.forEachGuest { beacon, readings in
            #expect(!readings.contains { now.milliseconds - $0.lastSeen >= exitAfter }, "step \(step): \(beacon) keeps an old reading")
        }
        return outputs
    }

    /// Ends the visits that ended `visitGap` ago, checked against the walk of the visits.
    private static func expireVisits(_ engine: inout PresenceEngine, at now: Timestamp, step: Int) {
        let due = engine.visits.filter { visit in
            visit.leftAt.map { now - $0 >= engine.rules(store: visit.store, department: visit.department).visitGap } ?? false
        }.map(\.member).sorted()
        #expect(engine.expireVisits(at: now) == due, "step \(step): visits forgotten")
        #expect(!engine.visits.contains { due.contains($0.member) }, "step \(step): forgotten visits are gone")
    }

    /// No tick before `nextDeadline` has anything to do.
    private static func expectQuietUntilNextDeadline(_ engine: PresenceEngine, at now: Timestamp, step: Int) {
        var copy = engine
        let before = (copy.nextDeadline ?? now + .seconds(100)) - .milliseconds(1)
        guard before > now else { return }
        #expect(copy.tick(at: before).isEmpty, "step \(step): a tick before the next deadline")
        #expect(copy.expireVisits(at: before).isEmpty, "step \(step): visits expired before the next deadline")
    }

    @Test(
        "guest counts, members present and tracked people equal a walk over everyone after every step",
        arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func sameAsWalks(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let standard = PresenceRules.testing(stale: 3_000, exit: 8_000, dwell: 2_000, gap: 12_000)
        // An entrance that settles and switches at once, and a fitting room that keeps people longer.
        let layouts = [
            DepartmentLayout(id: 10, rules: PresenceRules.testing(stale: 2_000, exit: 5_000, dwell: 0, gap: 6_000)),
            DepartmentLayout(id: 20, rules: standard),
            DepartmentLayout(id: 30, rules: PresenceRules.testing(stale: 6_000, exit: 15_000, dwell: 4_000, gap: 20_000)),
        ]
        let layout = Dictionary(uniqueKeysWithValues: Self.stores.map { ($0, layouts) })
        var engine = PresenceEngine(rules: standard, stores: layout)
        var directory: [BeaconKey: String] = [:]
        for (index, beacon) in Self.memberBeacons.enumerated() { directory[beacon] = "m\(index / 2)" }
        _ = engine.setDirectory(directory, members: ["phone-only"])

        var now = Timestamp(milliseconds: 1_763_769_600_000)
        var sequence: [NodeAddress: UInt64] = [:]
        var boots: [NodeAddress: Int] = [:]
        var rangingSequence: UInt64 = 0
        for step in 0..<2_500 {
            now = now + .milliseconds(Int64(random.next() % 400) + 50)
            let roll = random.next() % 100
            if roll < 55 {
                let node = NodeAddress(
                    store: Self.stores[Int(random.next() % 3)], department: Self.departments[Int(random.next() % 3)], node: "a")!
                sequence[node, default: 0] += 1
                var sightings: [Sighting] = []
                var lost: [BeaconKey] = []
                for beacon in Self.memberBeacons + Self.guestBeacons {
                    switch random.next() % 20 {
                    case 0..<5:
                        // Heard late now and then; equal signals now and then, so that ties are broken.
                        let age = Int64(random.next() % 4 == 0 ? random.next() % 4_000 : 0)
                        let rssi = random.next() % 3 == 0 ? -70 : random.uniform(-90, -50)
                        sightings.append(
                            Sighting(
                                beacon: beacon, rssi: rssi, count: 3, txPower: -59, distance: 2,
                                proximity: [.immediate, .near, .far][Int(random.next() % 3)], lastSeen: now - .milliseconds(age)))
                    case 5: lost.append(beacon)
                    default: break
                    }
                }
                let batch = SightingBatch(
                    node: node, boot: "boot\(boots[node, default: 0])", seq: sequence[node]!, sentAt: now,
                    sightings: sightings, lost: lost)
                _ = engine.ingest(batch, at: now)
                if let number = engine.nodeNumbers[node] {
                    engine.guests.forEachGuest { beacon, readings in
                        #expect(!(lost.contains(beacon) && readings.contains { $0.node == number }), "step \(step): \(beacon) was lost")
                    }
                }
            } else if roll < 60 {
                let node = NodeAddress(
                    store: Self.stores[Int(random.next() % 3)], department: Self.departments[Int(random.next() % 3)], node: "a")!
                let state: LinkState = random.next() % 2 == 0 ? .offline : .online
                if state == .online {
                    boots[node, default: 0] += 1
                    sequence[node] = 0
                }
                _ = engine.nodeStatusChanged(node, state: state, boot: "boot\(boots[node, default: 0])", at: now)
                if state == .offline, let number = engine.nodeNumbers[node] {
                    engine.guests.forEachGuest { beacon, readings in
                        #expect(!readings.contains { $0.node == number }, "step \(step): \(beacon) keeps a reading of an offline node")
                    }
                    #expect(
                        !engine.members.contains { $0.readings.contains { $0.node == number } },
                        "step \(step): a member keeps a reading of an offline node")
                }
            } else if roll < 62 {
                // Silence: several seconds with nothing but ticks, so readings go stale and people leave.
                for _ in 0..<Int(random.next() % 40) {
                    now = now + .milliseconds(250)
                    _ = Self.tick(&engine, at: now, step: step)
                    guard Self.expectSameAsWalks(engine, at: now, step: step, random: &random) else { return }
                }
            } else if roll < 65 {
                // The directory changes: beacons change hands, guests become members and members' beacons guests,
                // members are forgotten.
                var changed: [BeaconKey: String] = [:]
                for beacon in Self.memberBeacons + Self.guestBeacons.prefix(8) where random.next() % 3 != 0 {
                    changed[beacon] = "m\(random.next() % 10)"
                }
                _ = engine.setDirectory(changed, members: random.next() % 2 == 0 ? ["phone-only"] : [])
            } else if roll < 68 {
                // A phone ranging in a store, for a member of the directory or not.
                rangingSequence += 1
                let beacons = Self.departments.filter { _ in random.next() % 2 == 0 }.map {
                    RangingReport.RangedBeacon(department: $0, proximity: .near, rssi: random.uniform(-90, -50), accuracy: 1)
                }
                let member = ["phone-only", "m1", "m9"][Int(random.next() % 3)]
                _ = engine.ingest(
                    RangingReport(member: member, session: "s", seq: rangingSequence, sentAt: now, beacons: beacons),
                    store: Self.stores[Int(random.next() % 3)], at: now)
            } else if roll < 69 {
                // A restart: a new engine with the saved visits.
                var restarted = PresenceEngine(rules: standard, stores: layout)
                _ = restarted.setDirectory(directory, members: ["phone-only"])
                restarted.restore(engine.visits)
                engine = restarted
                sequence = [:]
                boots = boots.mapValues { $0 + 1 }
            } else if roll < 70 {
                // The clock is set back a little.
                now = now - .milliseconds(Int64(random.next() % 2_000))
            } else {
                _ = Self.tick(&engine, at: now, step: step)
            }
            Self.expireVisits(&engine, at: now, step: step)
            guard Self.expectSameAsWalks(engine, at: now, step: step, random: &random) else { return }
            Self.expectQuietUntilNextDeadline(engine, at: now, step: step)
        }
    }

    @Test("a guest heard by a node that goes offline no longer counts, and is forgotten with its last reading")
    func offlineNodeDropsGuests() {
        var engine = PresenceEngine(
            rules: PresenceRules(),
            stores: [
                1: [
                    DepartmentLayout(id: 10, rules: PresenceRules()),
                    DepartmentLayout(id: 20, rules: PresenceRules()),
                ]
            ])
        let now = Timestamp(milliseconds: 1_763_769_600_000)
        let guest = BeaconKey.iBeacon(uuid: Self.uuid, major: 9, minor: 1)
        let other = BeaconKey.iBeacon(uuid: Self.uuid, major: 9, minor: 2)
        let sighting = { (beacon: BeaconKey, rssi: Double) in
            Sighting(beacon: beacon, rssi: rssi, count: 1, txPower: -59, distance: 2, proximity: .near, lastSeen: now)
        }
        let ten = NodeAddress(store: 1, department: 10, node: "a")!
        let twenty = NodeAddress(store: 1, department: 20, node: "a")!
        _ = engine.ingest(
            SightingBatch(node: ten, boot: "b", seq: 1, sentAt: now, sightings: [sighting(guest, -60), sighting(other, -60)]), at: now)
        _ = engine.ingest(SightingBatch(node: twenty, boot: "b", seq: 1, sentAt: now, sightings: [sighting(guest, -80)]), at: now)
        #expect(engine.guestCountsByStore(at: now) == [1: [10: 2]])
        #expect(engine.trackedCount == 2)
        _ = engine.nodeStatusChanged(ten, state: .offline, boot: "b", at: now)
        #expect(engine.guestCountsByStore(at: now) == [1: [20: 1]])
        #expect(engine.trackedCount == 1)
    }

    @Test("a guest's counted reading going stale moves it to its next best department, before any tick")
    func staleReadingBetweenTicks() {
        var fast = PresenceRules()
        fast.staleAfter = .seconds(2)
        var engine = PresenceEngine(
            rules: PresenceRules(),
            stores: [
                1: [
                    DepartmentLayout(id: 10, rules: fast),
                    DepartmentLayout(id: 20, rules: PresenceRules()),
                ]
            ])
        let now = Timestamp(milliseconds: 1_763_769_600_000)
        let guest = BeaconKey.iBeacon(uuid: Self.uuid, major: 9, minor: 1)
        for (department, rssi) in [(10, -55.0), (20, -75.0)] {
            let node = NodeAddress(store: 1, department: UInt16(department), node: "a")!
            let sighting = Sighting(beacon: guest, rssi: rssi, count: 1, txPower: -59, distance: 2, proximity: .near, lastSeen: now)
            _ = engine.ingest(SightingBatch(node: node, boot: "b", seq: 1, sentAt: now, sightings: [sighting]), at: now)
        }
        #expect(engine.guestCounts(store: 1, at: now + .milliseconds(1_999)) == [10: 1])
        #expect(engine.guestCounts(store: 1, at: now + .seconds(2)) == [20: 1])
        #expect(engine.guestCounts(store: 1, at: now + .seconds(5)) == [:])
        #expect(engine.guestCountsByStore(at: now + .seconds(3)) == [1: [20: 1]])
        _ = engine.tick(at: now + .seconds(3))
        #expect(engine.guestCountsByStore(at: now + .seconds(3)) == [1: [20: 1]])
        // Asked about a time before the tick (a clock set back): the counts then.
        #expect(engine.guestCountsByStore(at: now + .seconds(1)) == [1: [10: 1]])
    }
}
