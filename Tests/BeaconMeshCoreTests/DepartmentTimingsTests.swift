import Testing

@testable import BeaconMeshCore

@Suite("Department timings")
struct DepartmentTimingsTests {
    /// Rules that differ in every field from department to department, so that a wrong slot shows.
    private static func rules(store: UInt16, department: UInt16) -> PresenceRules {
        var rules = PresenceRules()
        let salt = Int64(store) * 1_000 + Int64(department)
        rules.staleAfter = .milliseconds(1_000 + salt)
        rules.exitAfter = .milliseconds(30_000 + salt)
        rules.switchMargin = 1 + Double(salt) / 1_000
        rules.switchDwell = .milliseconds(500 + salt % 700)
        rules.visitGap = .milliseconds(600_000 + salt)
        return rules
    }

    @Test("every department of a big layout finds its own rules, in milliseconds; others get the default or no store")
    func findsEveryDepartment() {
        var layout: [UInt16: [UInt16: PresenceRules]] = [:]
        // Store and department ids that collide in the table's slots: multiples of large powers of two.
        let stores: [UInt16] = [1, 2, 3, 256, 512, 4_096, 32_768, 65_535] + (10..<200).map { UInt16($0) }
        for store in stores {
            var departments: [UInt16: PresenceRules] = [:]
            for department: UInt16 in [0, 1, 2, 16, 256, 1_024, 65_535] where department % 3 != UInt16(store % 3) {
                departments[department] = Self.rules(store: store, department: department)
            }
            layout[store] = departments
        }
        var fallback = PresenceRules()
        fallback.switchDwell = .milliseconds(2_500)
        let timings = DepartmentTimings(default: fallback, stores: layout)

        for (store, departments) in layout {
            #expect(timings.serves(store: store))
            for department: UInt16 in [0, 1, 2, 16, 256, 1_024, 65_535] {
                let expected = departments[department].map(DepartmentTimings.Timing.init) ?? DepartmentTimings.Timing(fallback)
                #expect(timings.timing(store: store, department: department) == expected, "store \(store) department \(department)")
            }
        }
        let rules = Self.rules(store: 256, department: 2)
        #expect(timings.timing(store: 256, department: 2).exitAfter == rules.exitAfter.wholeMilliseconds)
        #expect(timings.timing(store: 1, department: 0).arrivalSettle == 800)  // the shorter of 1 s and its 800 ms dwell
        #expect(timings.timing(store: 9, department: 1) == DepartmentTimings.Timing(fallback))
        for store: UInt16 in [0, 4, 9, 200, 1_000, 65_534] { #expect(!timings.serves(store: store)) }
    }
}
