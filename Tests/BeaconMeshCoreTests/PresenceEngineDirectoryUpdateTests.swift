import Testing

@testable import BeaconMeshCore

/// `updateDirectory`: the directory changed for some members only gives the same presence as the whole directory
/// set again.
@Suite("Presence engine: the directory changed member by member")
struct PresenceEngineDirectoryUpdateTests {
    @Test("a guest's beacon given to a new member: their next readings greet the member, and the guest count drops")
    func guestBecomesMember() {
        var script = StoreScript()
        script.hold(.seconds(3), [:])
        for _ in 0..<6 {
            script.now = script.now + .milliseconds(500)
            script.batch([20: -60], beacon: StoreScript.guest)
            script.outputs += script.engine.tick(at: script.now)
        }
        #expect(script.engine.guestCounts(store: 1, at: script.now) == [20: 1])
        _ = script.engine.updateDirectory(["zoe": [StoreScript.guest]], removing: [])
        #expect(script.engine.guestCounts(store: 1, at: script.now)[20, default: 0] == 0)
        for _ in 0..<6 {
            script.now = script.now + .milliseconds(500)
            script.batch([20: -60], beacon: StoreScript.guest)
            script.outputs += script.engine.tick(at: script.now)
        }
        #expect(script.story == ["arrived 20"])
        #expect(script.engine.presentMembers(store: 1).map(\.member) == ["zoe"])
    }

    @Test("a member who gives up one beacon keeps the other: the one given up is nobody's, the other still greets")
    func beaconTakenAway() {
        var script = StoreScript()
        _ = script.engine.updateDirectory(["ana": [StoreScript.phone]], removing: [])
        script.hold(.seconds(3), [10: -55])
        #expect(script.story == ["arrived 10"])
        // Readings of the fob alone no longer keep Ana: she leaves exitAfter after her phone's last reading.
        for _ in 0..<30 {
            script.now = script.now + .milliseconds(500)
            script.batch([10: -55], beacon: StoreScript.fob)
            script.outputs += script.engine.tick(at: script.now)
        }
        #expect(script.story == ["arrived 10", "left 10"])
        #expect(script.engine.guestCounts(store: 1, at: script.now) == [10: 1], "the fob is a guest now")
    }

    @Test("a member removed while present disappears at once; one changed keeps their visit")
    func removedAndChanged() {
        var script = StoreScript()
        _ = script.engine.updateDirectory(["ben": [StoreScript.guest]], removing: [])
        script.hold(.seconds(3), [10: -55])
        for _ in 0..<6 {
            script.now = script.now + .milliseconds(500)
            script.batch([20: -60], beacon: StoreScript.guest)
            script.outputs += script.engine.tick(at: script.now)
        }
        #expect(Set(script.engine.presentMembers(store: 1).map(\.member)) == ["ana", "ben"])
        let outputs = script.engine.updateDirectory(["ben": [StoreScript.guest]], removing: ["ana"])
        #expect(outputs == [.presenceChanged(store: 1)])
        #expect(script.engine.presentMembers(store: 1).map(\.member) == ["ben"])
        script.hold(.seconds(2), [10: -55])
        #expect(!script.story.contains("left 20"), "Ben's visit goes on: \(script.story)")
        #expect(script.engine.guestCounts(store: 1, at: script.now)[10] == 1, "Ana's phone is a guest's now")
    }

    @Test("a beacon passed to another member is theirs alone; the former owner keeps the rest, then gives it up too")
    func beaconPassedOn() {
        var script = StoreScript()
        // Ana had her phone and her fob; Ben gets the fob (only he is announced).
        _ = script.engine.updateDirectory(["ben": [StoreScript.fob]], removing: [])
        // Ana announced again with only her phone (a count changed): nothing of hers moves.
        _ = script.engine.updateDirectory(["ana": [StoreScript.phone]], removing: [])
        script.hold(.seconds(3), [10: -55])
        for _ in 0..<6 {
            script.now = script.now + .milliseconds(500)
            script.batch([20: -60], beacon: StoreScript.fob)
            script.outputs += script.engine.tick(at: script.now)
        }
        let present = script.engine.presentMembers(store: 1)
        #expect(present.map { "\($0.member) \($0.department)" }.sorted() == ["ana 10", "ben 20"])
        // Ana gives up her phone: it is a guest's from its next reading on.
        _ = script.engine.updateDirectory(["ana": []], removing: [])
        script.hold(.seconds(1), [10: -55])
        #expect(script.engine.guestCounts(store: 1, at: script.now)[10] == 1)
    }
}
