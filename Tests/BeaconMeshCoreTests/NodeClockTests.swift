import Testing

@testable import BeaconMeshCore

/// The contract's "node clocks are not trusted": how old a reading is comes from the coordinator's clock; a node's
/// clock only orders and spaces its own readings.
@Suite("Node clocks")
struct NodeClockTests {
    private static let hour: Int64 = 3_600_000
    private static let start: Int64 = 1_763_769_600_000

    /// Feeds `clock` one message every `every` ms for `count` messages from a sender `skew` ms ahead of us.
    private static func feed(
        _ clock: inout SenderClock, skew: Int64, from: Int64, count: Int, every: Int64 = 500,
        transit: Int64 = 3
    ) -> Int64 {
        var now = from
        for _ in 0..<count {
            now += every
            clock.observe(sentAt: now - transit + skew, receivedAt: now, followsPrevious: true)
        }
        return now
    }

    @Test("a sender 3 h behind is recognised within two seconds; one ahead at once")
    func behindAndAhead() {
        var behind = SenderClock()
        _ = NodeClockTests.feed(&behind, skew: -3 * NodeClockTests.hour, from: NodeClockTests.start, count: 5)
        #expect(abs(behind.skew + 3 * NodeClockTests.hour) < 50, "skew \(behind.skew)")
        var ahead = SenderClock()
        _ = NodeClockTests.feed(&ahead, skew: NodeClockTests.hour, from: NodeClockTests.start, count: 1)
        #expect(abs(ahead.skew - NodeClockTests.hour) < 50, "skew \(ahead.skew)")
        #expect(ahead.local(NodeClockTests.start + NodeClockTests.hour, now: NodeClockTests.start + 10) == NodeClockTests.start + 3)
    }

    @Test("a backlog delivered in a burst after an outage does not move the estimate: its readings stay old")
    func backlogIsOld() {
        var clock = SenderClock()
        var now = NodeClockTests.feed(&clock, skew: 0, from: NodeClockTests.start, count: 10)
        // 60 s of batches (one per 500 ms) queued during an outage arrive within 120 ms, then fresh ones follow.
        let outageStart = now
        now += 60_000
        for index in 0..<120 {
            clock.observe(sentAt: outageStart + Int64(index) * 500, receivedAt: now + Int64(index), followsPrevious: true)
            #expect(clock.offset < 50, "estimate moved to \(clock.offset) at message \(index)")
        }
        _ = NodeClockTests.feed(&clock, skew: 0, from: now + 120, count: 10)
        #expect(abs(clock.skew) < 50)
        #expect(clock.local(outageStart, now: now) == outageStart + clock.offset, "an old reading stays old")
    }

    @Test("a clock set back by an hour mid-run is taken at the next message")
    func clockSetBack() {
        var clock = SenderClock()
        let now = NodeClockTests.feed(&clock, skew: 0, from: NodeClockTests.start, count: 10)
        _ = NodeClockTests.feed(&clock, skew: -NodeClockTests.hour, from: now, count: 1)
        #expect(abs(clock.skew + NodeClockTests.hour) < 50, "skew \(clock.skew)")
    }

    @Test("a member heard only by a node whose clock is 3 h behind is greeted, and leaves exitAfter after the last reading")
    func nodeBehindGreets() {
        var script = StoreScript()
        script.nodeClock[10] = .seconds(-3 * 3600)
        script.hold(.seconds(4), [10: -60])
        #expect(script.story == ["arrived 10"], "\(script.story)")
        let clock = script.engine.nodeClocks.first { $0.node == StoreScript.node(10) }
        #expect(clock.map { abs($0.clockSkew + 3 * 3_600_000) < 1_000 } == true, "\(String(describing: clock))")
        script.hold(.seconds(9))
        #expect(script.story == ["arrived 10"], "not gone before exitAfter")
        script.hold(.seconds(2))
        #expect(script.story == ["arrived 10", "left 10"], "\(script.story)")
    }

    @Test("nodes an hour ahead and 3 h behind side by side: the department follows the signal, not the clocks")
    func mixedClocksFollowSignal() {
        var script = StoreScript()
        script.nodeClock[10] = .seconds(3600)
        script.nodeClock[20] = .seconds(-3 * 3600)
        // The nodes have been running a while (hearing a guest) when the member comes in.
        for _ in 0..<6 {
            script.now = script.now + .milliseconds(500)
            script.batch([10: -80, 20: -80], beacon: StoreScript.guest)
        }
        script.hold(.seconds(4), [10: -75, 20: -55])
        #expect(script.story == ["arrived 20"], "\(script.story)")
        script.hold(.seconds(8), [10: -55, 20: -75])
        #expect(script.story == ["arrived 20", "moved 20→10"], "\(script.story)")
    }

    @Test("a node clock that jumps back an hour during a visit moves and ends nothing")
    func jumpDuringVisit() {
        var script = StoreScript()
        script.hold(.seconds(4), [10: -60])
        script.nodeClock[10] = .seconds(-3600)
        script.hold(.seconds(20), [10: -60])
        script.nodeClock[10] = .zero
        script.hold(.seconds(5), [10: -60])
        #expect(script.story == ["arrived 10"], "\(script.story)")
    }
}
