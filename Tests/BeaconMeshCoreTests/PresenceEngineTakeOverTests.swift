import Testing

@testable import BeaconMeshCore

/// A standby coordinator's engine, warm from the sightings it heard, taking a store over with the registry's visits.
@Suite("Presence engine: take-over")
struct PresenceEngineTakeOverTests {
    @Test("a member heard all along keeps the registry's visit, though its saved last-seen time is older than exitAfter")
    func heardAllAlong() {
        var standby = StoreScript()
        standby.hold(.seconds(5), [10: -55])
        let arrivedAt = StoreScript().now + .seconds(1)
        standby.hold(.seconds(12), [10: -55])
        standby.outputs = []
        // The registry's visit was saved at arrival: 16 s old, more than exitAfter (10 s).
        let saved = PresenceEngine.Visit(
            member: "ana", store: 1, arrivedAt: arrivedAt, department: 10, inDepartmentSince: arrivedAt, lastSeen: arrivedAt,
            leftAt: nil, proximity: .near)
        standby.engine.takeOver(store: 1, visits: [saved])
        #expect(standby.engine.visit(of: "ana")?.arrivedAt == arrivedAt)
        standby.hold(.seconds(3), [10: -55])
        standby.hold(.seconds(15))
        #expect(standby.story == ["left 10"], "no second greeting, no early exit: \(standby.outputs)")
    }

    @Test("a visit the standby made up that the registry lacks is dropped: the member is greeted by the new holder")
    func unannouncedVisitDropped() {
        var standby = StoreScript()
        standby.hold(.seconds(5), [10: -55])
        standby.outputs = []
        standby.engine.takeOver(store: 1, visits: [])
        #expect(standby.engine.visit(of: "ana") == nil)
        standby.hold(.seconds(3), [10: -55])
        #expect(standby.story == ["arrived 10"])
    }

    @Test("a registry visit of a member no longer heard ends once, at exitAfter after its last reading")
    func goneMemberLeavesOnce() {
        var standby = StoreScript()
        let saved = PresenceEngine.Visit(
            member: "ana", store: 1, arrivedAt: standby.now, department: 20, inDepartmentSince: standby.now,
            lastSeen: standby.now, leftAt: nil, proximity: .near)
        standby.hold(.seconds(4))
        standby.engine.takeOver(store: 1, visits: [saved])
        standby.hold(.seconds(20))
        #expect(standby.story == ["left 20"])
    }
}
