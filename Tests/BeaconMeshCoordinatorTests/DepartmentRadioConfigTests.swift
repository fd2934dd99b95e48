import BeaconMeshCore
import BeaconMeshService
import Testing

@testable import BeaconMeshCoordinator

/// A department's `minRssi` and `neighbours` in the coordinator config, as the presence engine gets them.
@Suite("Coordinator config minRssi and neighbours")
struct DepartmentRadioConfigTests {
    private func config(_ fields: String) throws(ConfigurationError) -> CoordinatorConfiguration {
        try CoordinatorConfiguration.parse(
            yaml: """
                stores:
                  - id: 1
                    departments:
                      - {id: 10, name: Clothing, \(fields)}
                      - {id: 20, name: Housewares}
                      - {id: 30, name: Automotive}
                """, file: "c.yaml", defaultID: "x")
    }

    @Test("minRssi and neighbours reach the department's layout; a department without them has neither")
    func keysReachTheLayout() throws {
        let store = try config("minRssi: -85, neighbours: [20, 30]").stores[0]
        #expect(store.departments[0].minRSSI == -85)
        #expect(store.departments[0].neighbours == [20, 30])
        #expect(
            store.departments[0].layout
                == DepartmentLayout(id: 10, rules: store.departments[0].presence, minRSSI: -85, neighbours: [20, 30]))
        #expect(store.departments[1].layout == DepartmentLayout(id: 20, rules: store.departments[1].presence))
        #expect(try config("neighbours: []").stores[0].departments[0].layout.neighbours == [], "no neighbour at all is allowed")
    }

    @Test(
        "a bad minRssi or neighbours is one line naming the file, the line and the key",
        arguments: [
            (
                "minRssi: -150",
                "c.yaml:4: stores[0].departments[0].minRssi must be a signal strength in dBm from -127 to 0, such as -85 (found '-150')"
            ),
            ("minRssi: 3", "c.yaml:4: stores[0].departments[0].minRssi must be a signal strength in dBm from -127 to 0"),
            ("minRssi: loud", "c.yaml:4: stores[0].departments[0].minRssi must be a number"),
            ("neighbours: 20", "c.yaml:4: stores[0].departments[0].neighbours must be a list"),
            ("neighbours: [twenty]", "c.yaml:4: stores[0].departments[0].neighbours must be a whole number from 0 to 65535"),
            ("neighbours: [20, 40]", "c.yaml:4: stores[0].departments[0].neighbours lists department 40, which store 1 does not have"),
            ("neighbours: [10, 20]", "c.yaml:4: stores[0].departments[0].neighbours lists department 10 itself"),
        ])
    func badValues(fields: String, message: String) {
        do {
            _ = try config(fields)
            Issue.record("accepted \(fields)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }
}
