import Testing

@testable import BeaconMeshCore

/// Ticks skip people whose state time alone cannot change yet (`nextCheck`). These tests drive two engines with the
/// same random inputs, one of them evaluating everyone on every tick, and require the same outputs at every step.
@Suite("Presence engine ticks")
struct PresenceEngineTickTests {
    private static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!

    @Test("skipping quiet people on ticks changes no output", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func sameOutputs(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let standard = PresenceRules.testing(stale: 3_000, exit: 8_000, dwell: 2_000, gap: 20_000)
        // An entrance that settles and switches at once, and a fitting room that keeps people longer.
        let layouts = [
            DepartmentLayout(id: 10, rules: PresenceRules.testing(stale: 2_000, exit: 5_000, dwell: 0, gap: 20_000)),
            DepartmentLayout(id: 20, rules: standard),
            DepartmentLayout(id: 30, rules: PresenceRules.testing(stale: 6_000, exit: 15_000, dwell: 4_000, gap: 20_000)),
        ]
        var skipping = PresenceEngine(rules: standard, stores: [1: layouts, 2: layouts])
        var everyone = skipping
        everyone.evaluatesEveryoneOnTick = true
        let members = (0..<6).map { BeaconKey.iBeacon(uuid: Self.uuid, major: 1, minor: UInt16($0)) }
        let guest = BeaconKey.iBeacon(uuid: Self.uuid, major: 9, minor: 9)
        var directory: [BeaconKey: String] = [:]
        for (index, beacon) in members.enumerated() { directory[beacon] = "m\(index / 2)" }  // two beacons each
        _ = skipping.setDirectory(directory)
        _ = everyone.setDirectory(directory)

        var now = Timestamp(milliseconds: 1_763_769_600_000)
        var sequence: [NodeAddress: UInt64] = [:]
        var boots: [NodeAddress: Int] = [:]
        for step in 0..<3_000 {
            now = now + .milliseconds(Int64(random.next() % 400) + 50)
            let roll = random.next() % 100
            var outputs: (skipping: [PresenceEngine.Output], everyone: [PresenceEngine.Output])
            if roll < 60 {
                let store = UInt16(random.next() % 2 + 1)
                let node = NodeAddress(store: store, department: [10, 20, 30][Int(random.next() % 3)], node: "a")!
                sequence[node, default: 0] += 1
                var sightings: [Sighting] = []
                var lost: [BeaconKey] = []
                for beacon in members + [guest] {
                    switch random.next() % 10 {
                    case 0..<3:
                        // Heard late now and then: readings may arrive up to 2 s old.
                        let age = Int64(random.next() % 4 == 0 ? random.next() % 2_000 : 0)
                        sightings.append(
                            Sighting(
                                beacon: beacon, rssi: random.uniform(-90, -50), count: 3, txPower: -59, distance: 2,
                                proximity: .near, lastSeen: now - .milliseconds(age)))
                    case 3: lost.append(beacon)
                    default: break
                    }
                }
                let batch = SightingBatch(
                    node: node, boot: "boot\(boots[node, default: 0])", seq: sequence[node]!, sentAt: now,
                    sightings: sightings, lost: lost)
                outputs = (skipping.ingest(batch, at: now).outputs, everyone.ingest(batch, at: now).outputs)
            } else if roll < 63 {
                let node = NodeAddress(store: UInt16(random.next() % 2 + 1), department: [10, 20, 30][Int(random.next() % 3)], node: "a")!
                let state: LinkState = random.next() % 2 == 0 ? .offline : .online
                if state == .online {
                    boots[node, default: 0] += 1
                    sequence[node] = 0
                }
                let boot = "boot\(boots[node, default: 0])"
                outputs = (
                    skipping.nodeStatusChanged(node, state: state, boot: boot, at: now),
                    everyone.nodeStatusChanged(node, state: state, boot: boot, at: now)
                )
            } else if roll < 65 {
                // Silence: several seconds with nothing but ticks, so readings go stale and people leave.
                outputs = ([], [])
                for _ in 0..<Int(random.next() % 40) {
                    now = now + .milliseconds(250)
                    outputs.skipping += skipping.tick(at: now)
                    outputs.everyone += everyone.tick(at: now)
                }
            } else {
                outputs = (skipping.tick(at: now), everyone.tick(at: now))
            }
            #expect(outputs.skipping == outputs.everyone, "step \(step)")
            if outputs.skipping != outputs.everyone { return }
            #expect(skipping.expireVisits(at: now) == everyone.expireVisits(at: now))
        }
        #expect(skipping.visits.sorted { $0.member < $1.member } == everyone.visits.sorted { $0.member < $1.member })
    }
}
