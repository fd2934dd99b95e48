import BeaconMeshCore
import Testing

@Suite("the phone's walk through a store")
struct PhoneWalkTests {
    /// A fixed random source, so the jitter is the same every run.
    struct Counter: RandomNumberGenerator {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    @Test("the phone stays dwell in each department of the route, in order, then is out of the store for good")
    func stepsThroughTheRoute() {
        let walk = PhoneWalk(route: [10, 20, 30], dwell: .seconds(4))
        #expect(walk.step(at: .zero) == 0)
        #expect(walk.step(at: .milliseconds(3999)) == 0)
        #expect(walk.step(at: .seconds(4)) == 1)
        #expect(walk.step(at: .milliseconds(11_999)) == 2)
        #expect(walk.step(at: .seconds(12)) == nil)
        #expect(walk.step(at: .seconds(3600)) == nil)
        #expect(!walk.isFinished(at: .milliseconds(11_999)))
        #expect(walk.isFinished(at: .seconds(12)))
    }

    @Test("with away set the phone comes back after that long and walks again")
    func loops() {
        let walk = PhoneWalk(route: [10, 20], dwell: .seconds(5), away: .seconds(30))
        #expect(walk.step(at: .seconds(9)) == 1)
        #expect(walk.step(at: .seconds(10)) == nil)
        #expect(walk.step(at: .seconds(39)) == nil)
        #expect(walk.step(at: .seconds(40)) == 0)
        #expect(walk.step(at: .seconds(46)) == 1)
        #expect(!walk.isFinished(at: .seconds(1000)))
    }

    @Test("the department the phone stands in is ranged near and strong, the route's neighbours far and faint, nearest first")
    func rangesLikeAPhone() {
        let walk = PhoneWalk(route: [10, 20, 30, 40], dwell: .seconds(10))
        var random = Counter()
        for second in stride(from: 10, to: 20, by: 1) {
            let beacons = walk.beacons(at: .seconds(second), using: &random)
            #expect(beacons.map(\.department) == [20, 10, 30] || beacons.map(\.department) == [20, 30, 10], "\(beacons)")
            let here = beacons[0]
            #expect(here.proximity == .near || here.proximity == .immediate)
            #expect((-65 ... -55).contains(here.rssi ?? 0), "\(here)")
            #expect((0.5...2.5).contains(here.accuracy ?? -1), "\(here)")
            for neighbour in beacons.dropFirst() {
                #expect(neighbour.proximity == .far)
                #expect((-87 ... -77).contains(neighbour.rssi ?? 0), "\(neighbour)")
                #expect((neighbour.accuracy ?? 0) > 5)
            }
        }
    }

    @Test("readings jitter from report to report")
    func jitters() {
        let walk = PhoneWalk(route: [10], dwell: .seconds(60))
        var random = Counter()
        let readings = Set((0..<20).compactMap { walk.beacons(at: .seconds($0), using: &random).first?.rssi })
        #expect(readings.count > 3, "\(readings)")
    }

    @Test("at either end of the route only one neighbour is ranged; a department met twice is listed once; out of the store nothing")
    func edges() {
        var random = Counter()
        #expect(PhoneWalk(route: [10, 20, 30], dwell: .seconds(1)).beacons(at: .zero, using: &random).map(\.department) == [10, 20])
        #expect(PhoneWalk(route: [10, 20, 10], dwell: .seconds(1)).beacons(at: .seconds(1), using: &random).map(\.department) == [20, 10])
        #expect(PhoneWalk(route: [10, 10], dwell: .seconds(1)).beacons(at: .zero, using: &random).map(\.department) == [10])
        #expect(PhoneWalk(route: [10, 20], dwell: .seconds(1)).beacons(at: .seconds(2), using: &random).isEmpty)
    }
}
