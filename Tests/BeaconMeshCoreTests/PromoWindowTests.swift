import Testing

@testable import BeaconMeshCore

@Suite("Promo windows and audiences")
struct PromoWindowTests {
    private let day = PromoWindow.Day(year: 2026, month: 11, day: 22)

    @Test("dates are inclusive and impossible dates are refused")
    func dates() throws {
        let window = PromoWindow(from: PromoWindow.Day("2026-11-22"), until: PromoWindow.Day("2026-11-30"))
        #expect(window.check(day: day, minute: 600).open)
        #expect(!window.check(day: PromoWindow.Day(year: 2026, month: 12, day: 1), minute: 600).open)
        #expect(window.check(day: PromoWindow.Day(year: 2026, month: 11, day: 21), minute: 600).reason == "starts on 2026-11-22")
        #expect(PromoWindow.Day("2026-02-29") == nil)
        #expect(PromoWindow.Day("2028-02-29") != nil)
        #expect(PromoWindow.Day("26-11-22") == nil)
    }

    @Test("daily hours, also across midnight")
    func hours() throws {
        let morning = try #require(PromoWindow.Hours("08:00-11:30"))
        #expect(morning.contains(minute: 8 * 60))
        #expect(!morning.contains(minute: 11 * 60 + 30))
        let night = try #require(PromoWindow.Hours("22:00-02:00"))
        #expect(night.contains(minute: 23 * 60) && night.contains(minute: 60) && !night.contains(minute: 12 * 60))
        #expect(PromoWindow.Hours("8-11") == nil)
        #expect(PromoWindow.Hours("25:00-26:00") == nil)
        #expect(PromoWindow(hours: morning).check(day: day, minute: 12 * 60) == (false, "only 08:00-11:30"))
    }

    @Test("a reward on the 10th visit, and a promo for named members only")
    func audience() {
        let tenth = PromoAudience(minVisits: 10)
        #expect(!tenth.includes(member: "ana", visits: 9))
        #expect(tenth.includes(member: "ana", visits: 10))
        let named = PromoAudience(members: ["ana"])
        #expect(named.includes(member: "ana", visits: 1) && !named.includes(member: "ben", visits: 50))
    }
}
