import Testing

@testable import BeaconMeshCore

@Suite("Promo eligibility")
struct PromoEligibilityTests {
    private let start = Timestamp(milliseconds: 1_000_000)

    private func visit(_ proximity: Proximity, since: Timestamp) -> PresenceEngine.Visit {
        PresenceEngine.Visit(
            member: "ana", store: 9, arrivedAt: since, department: 6, inDepartmentSince: since,
            lastSeen: since, leftAt: nil, proximity: proximity)
    }

    @Test("a promo fires only after the member has dwelt in the department")
    func dwell() {
        let rule = PromoEligibility(proximity: .near, dwell: .seconds(3), cooldown: .seconds(86_400))
        #expect(!rule.shouldFire(for: visit(.near, since: start), lastFiredAt: nil, at: start + .seconds(2)))
        #expect(rule.shouldFire(for: visit(.near, since: start), lastFiredAt: nil, at: start + .seconds(3)))
    }

    @Test("the cafe's Free Latte fires only at immediate proximity")
    func immediateOnly() {
        let latte = PromoEligibility(proximity: .immediate, dwell: .zero, cooldown: .seconds(86_400))
        #expect(!latte.shouldFire(for: visit(.near, since: start), lastFiredAt: nil, at: start))
        #expect(!latte.shouldFire(for: visit(.unknown, since: start), lastFiredAt: nil, at: start))
        #expect(latte.shouldFire(for: visit(.immediate, since: start), lastFiredAt: nil, at: start))
    }

    @Test("a promo fires at most once per member within the cooldown")
    func cooldown() {
        let rule = PromoEligibility(proximity: .far, dwell: .zero, cooldown: .seconds(3600))
        let fired = start
        #expect(!rule.shouldFire(for: visit(.far, since: start), lastFiredAt: fired, at: start + .seconds(3599)))
        #expect(rule.shouldFire(for: visit(.far, since: start), lastFiredAt: fired, at: start + .seconds(3600)))
    }
}
