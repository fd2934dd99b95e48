import BeaconMeshCore
import Testing

@testable import BeaconMeshMonitor

@Suite("Event lines")
struct EventLineTests {
    @Test("an arrival reads as time, type, name, department, visit and greeting")
    func arrivedLine() {
        let member = MemberProfile(id: "li", name: "李雷", favoriteDrink: "Jasmine tea", visits: 25)
        let event = StoreEvent(
            id: "1", store: 1, at: Timestamp(milliseconds: 0),
            kind: .arrived(
                member: member, department: 10, departmentName: "Clothing",
                visit: VisitNumber(number: 25, previousAt: nil), greeting: "Welcome back, 李雷!", evidence: nil))
        let line = EventLine.format(event)
        #expect(line.hasSuffix("arrived  李雷              Clothing      visit 25 · Welcome back, 李雷!"))
    }

    @Test("an arrival and a move end with how sure the coordinator is and why; an event that does not say ends as before")
    func linesEndWithTheReason() {
        let member = MemberProfile(id: "ana", name: "Ana Souza", favoriteDrink: nil, visits: 3)
        let reason = "node a hears -61.0 dBm, 8.5 dB above department 10 (node b), for 3.0 s"
        let arrived = StoreEvent(
            id: "1", store: 1, at: Timestamp(milliseconds: 0),
            kind: .arrived(
                member: member, department: 20, departmentName: "Housewares", visit: VisitNumber(number: 3, previousAt: nil),
                greeting: "Hi Ana", evidence: DecisionEvidence(confidence: 0.923, reason: reason)))
        #expect(EventLine.format(arrived).hasSuffix("Housewares    visit 3 · Hi Ana (92%: \(reason))"))
        let moved = StoreEvent(
            id: "2", store: 1, at: Timestamp(milliseconds: 0),
            kind: .moved(
                member: member, from: 20, to: 10, fromName: "Housewares", toName: "Clothing",
                evidence: DecisionEvidence(confidence: 1, reason: "Ana's phone ranges Clothing 12.0 dB above Housewares")))
        #expect(EventLine.format(moved).hasSuffix("Housewares → Clothing (100%: Ana's phone ranges Clothing 12.0 dB above Housewares)"))
        let older = StoreEvent(
            id: "3", store: 1, at: Timestamp(milliseconds: 0),
            kind: .moved(member: member, from: 20, to: 10, fromName: "Housewares", toName: "Clothing", evidence: nil))
        #expect(EventLine.format(older).hasSuffix("Housewares → Clothing"))
    }

    @Test("durations read like a person would say them", arguments: [(45, "45s"), (200, "3m 20s"), (3900, "1h 05m")])
    func durations(seconds: Int, text: String) {
        #expect(EventLine.duration(seconds: seconds) == text)
    }
}
