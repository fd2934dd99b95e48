import Testing

@testable import BeaconMeshCore

/// Ranging reports from a member's phone, under the same presence rules as node sightings.
@Suite("Phone ranging")
struct RangingTests {
    /// Ana owns the phone and fob beacons of `StoreScript`; Bea is a member with no beacon at all.
    private static func script() -> StoreScript {
        var script = StoreScript()
        _ = script.engine.setDirectory([StoreScript.phone: "ana", StoreScript.fob: "ana"], members: ["bea"])
        return script
    }

    /// Sends one ranging report of `member`'s phone every 500 ms for `duration`, with `ranged` departments.
    private static func range(
        _ script: inout StoreScript, member: String, _ ranged: [UInt16: (Double, Proximity)], for duration: Duration,
        session: String = "s1", seq: inout UInt64, clockAhead: Duration = .zero
    ) {
        for _ in 0..<Int(duration.wholeMilliseconds / 500) {
            script.now = script.now + .milliseconds(500)
            seq += 1
            let beacons = ranged.sorted { $0.key < $1.key }.map {
                RangingReport.RangedBeacon(department: $0.key, proximity: $0.value.1, rssi: $0.value.0, accuracy: 1.5)
            }
            let report = RangingReport(member: member, session: session, seq: seq, sentAt: script.now + clockAhead, beacons: beacons)
            script.outputs += script.engine.ingest(report, store: 1, at: script.now).outputs
            script.outputs += script.engine.tick(at: script.now)
        }
    }

    @Test("a member seen only by their phone is greeted, moves and leaves like any other")
    func phoneOnlyMember() {
        var script = RangingTests.script()
        var seq: UInt64 = 0
        RangingTests.range(&script, member: "bea", [10: (-60, .near), 20: (-80, .far)], for: .seconds(4), seq: &seq)
        RangingTests.range(&script, member: "bea", [10: (-80, .far), 20: (-58, .near)], for: .seconds(5), seq: &seq)
        RangingTests.range(&script, member: "bea", [:], for: .seconds(12), seq: &seq)
        #expect(script.story == ["arrived 10", "moved 10→20", "left 20"], "\(script.story)")
        #expect(script.outputs.contains { if case .arrived("bea", 1, 10, _, _) = $0 { return true } else { return false } })
    }

    @Test("a member heard by their fob and their phone is one person with one visit")
    func phoneAndFobAreOne() {
        var script = RangingTests.script()
        var seq: UInt64 = 0
        for _ in 0..<8 {
            script.batch([10: -62], beacon: StoreScript.fob)
            RangingTests.range(&script, member: "ana", [10: (-60, .near)], for: .milliseconds(500), seq: &seq)
        }
        #expect(script.story == ["arrived 10"])
    }

    @Test("a phone whose clock is hours off still counts; repeated and older reports are ignored")
    func phoneClockAndOrder() {
        var script = RangingTests.script()
        var seq: UInt64 = 0
        RangingTests.range(&script, member: "bea", [20: (-60, .near)], for: .seconds(4), seq: &seq, clockAhead: .seconds(-5 * 3600))
        #expect(script.story == ["arrived 20"], "\(script.story)")
        let report = RangingReport(member: "bea", session: "s1", seq: seq, sentAt: script.now, beacons: [])
        #expect(script.engine.ingest(report, store: 1, at: script.now).verdict == .duplicate)
        var older = report
        older.seq = seq - 2
        #expect(script.engine.ingest(older, store: 1, at: script.now).verdict == .late)
        #expect(script.engine.counters.gaps == 0)
        var skipping = report
        skipping.seq = seq + 3
        #expect(script.engine.ingest(skipping, store: 1, at: script.now).verdict == .applied)
        #expect(script.engine.counters.gaps == 2)
        var reordered = report
        reordered.seq = seq + 1
        #expect(script.engine.ingest(reordered, store: 1, at: script.now).verdict == .late)
        #expect(script.engine.counters.gaps == 1, "a report that arrives late was not lost")
        let stranger = RangingReport(member: "nobody", session: "x", seq: 1, sentAt: script.now, beacons: [])
        #expect(script.engine.ingest(stranger, store: 1, at: script.now).verdict == .unknownMember)
        #expect(script.engine.ingest(report, store: 77, at: script.now).verdict == .unknownStore)
    }

    @Test("heard near the till: immediate or near in that department within the window, by phone or node")
    func heardNear() {
        var script = RangingTests.script()
        var seq: UInt64 = 0
        RangingTests.range(&script, member: "bea", [30: (-50, .immediate)], for: .seconds(2), seq: &seq)
        #expect(script.engine.heardNear(member: "bea", store: 1, department: 30, within: .seconds(5), at: script.now))
        #expect(!script.engine.heardNear(member: "bea", store: 1, department: 10, within: .seconds(5), at: script.now))
        #expect(!script.engine.heardNear(member: "bea", store: 1, department: 30, within: .seconds(5), at: script.now + .seconds(6)))
        RangingTests.range(&script, member: "bea", [30: (-85, .far)], for: .seconds(1), seq: &seq)
        #expect(!script.engine.heardNear(member: "bea", store: 1, department: 30, within: .seconds(5), at: script.now), "far is not near")
        script.batch([10: -55])
        #expect(script.engine.heardNear(member: "ana", store: 1, department: 10, within: .seconds(5), at: script.now))
    }
}
