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
                visit: VisitNumber(number: 25, previousAt: nil), greeting: "Welcome back, 李雷!"))
        let line = EventLine.format(event)
        #expect(line.hasSuffix("arrived  李雷              Clothing      visit 25 · Welcome back, 李雷!"))
    }

    @Test("durations read like a person would say them", arguments: [(45, "45s"), (200, "3m 20s"), (3900, "1h 05m")])
    func durations(seconds: Int, text: String) {
        #expect(EventLine.duration(seconds: seconds) == text)
    }
}
