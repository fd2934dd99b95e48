import BeaconMeshCore
import Testing

@testable import BeaconMeshDashboard

/// The beacons a store hears now, as the survey page lists them: pure, time passed in.
@Suite("Beacons a store hears")
struct HeardBeaconsTests {
    typealias F = BoardFixtures

    static func key(_ minor: Int) -> BeaconKey { BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:\(minor)")! }

    static func batch(store: UInt16 = 1, department: UInt16, node: String = "a", _ readings: [(Int, Double)], lost: [Int] = [])
        -> SightingBatch
    {
        SightingBatch(
            node: NodeAddress(store: store, department: department, node: node)!, boot: "b", seq: 1, sentAt: F.at(seconds: 0),
            sightings: readings.map { minor, rssi in
                Sighting(
                    beacon: key(minor), rssi: rssi, count: 1, txPower: nil, distance: nil, proximity: .near, lastSeen: F.at(seconds: 0))
            }, lost: lost.map(key))
    }

    @Test("each beacon at its loudest node, loudest first; another store's beacons are not this store's")
    func loudestFirst() {
        var heard = HeardBeacons()
        heard.record(Self.batch(department: 10, [(1, -70), (2, -55)]), at: F.at(seconds: 1))
        heard.record(Self.batch(department: 20, [(1, -60), (2, -80)]), at: F.at(seconds: 2))
        heard.record(Self.batch(store: 2, department: 10, [(3, -40)]), at: F.at(seconds: 2))
        let listed = heard.heard(store: 1, at: F.at(seconds: 3))
        #expect(listed.map(\.beacon) == [Self.key(2), Self.key(1)])
        #expect(listed.map(\.rssi) == [-55, -60])
        #expect(listed.map(\.node.department) == [10, 20], "each at the node that hears it loudest")
        #expect(listed[1].lastHeard == F.at(seconds: 2))
        #expect(heard.heard(store: 2, at: F.at(seconds: 3)).map(\.beacon) == [Self.key(3)])
        #expect(heard.heard(store: 9, at: F.at(seconds: 3)).isEmpty)
    }

    @Test("a beacon leaves the list 10 s after a node last heard it, or when its node reports it lost")
    func forgetsWhatIsGone() {
        var heard = HeardBeacons()
        heard.record(Self.batch(department: 10, [(1, -50), (2, -60)]), at: F.at(seconds: 0))
        heard.record(Self.batch(department: 20, [(2, -70)]), at: F.at(seconds: 8))
        #expect(heard.heard(store: 1, at: F.at(seconds: 10)).map(\.beacon) == [Self.key(1), Self.key(2)])
        // At 11 s node 10/a's readings are too old: beacon 1 is gone, beacon 2 is at node 20/a's -70.
        let later = heard.heard(store: 1, at: F.at(seconds: 11))
        #expect(later.map(\.beacon) == [Self.key(2)] && later.first?.rssi == -70)
        heard.record(Self.batch(department: 20, [], lost: [2]), at: F.at(seconds: 12))
        #expect(heard.heard(store: 1, at: F.at(seconds: 12)).isEmpty)
    }

    @Test("a store keeps at most 200 beacons: the quietest go first")
    func bounded() {
        var heard = HeardBeacons()
        heard.record(Self.batch(department: 10, (1...250).map { ($0, -30 - Double($0) / 10) }), at: F.at(seconds: 0))
        let listed = heard.heard(store: 1, at: F.at(seconds: 0))
        #expect(listed.count == HeardBeacons.limit)
        #expect(listed.first?.beacon == Self.key(1) && listed.last?.beacon == Self.key(200))
    }

    @Test("a store's sightings are subscribed from its page's first request and let go after two idle minutes")
    func listening() {
        let listening = SightingsListening()
        #expect(listening.asked(for: 1, at: F.at(seconds: 0)) == (true, []))
        #expect(listening.asked(for: 1, at: F.at(seconds: 3)) == (false, []))
        #expect(listening.asked(for: 2, at: F.at(seconds: 100)) == (true, []))
        #expect(listening.asked(for: 2, at: F.at(seconds: 124)) == (false, [1]), "store 1 last asked at 3 s")
        #expect(listening.asked(for: 1, at: F.at(seconds: 125)) == (true, []), "asked again: subscribed again")
    }
}
