import BeaconMeshCore
import Testing

@testable import BeaconMeshCoordinator

@Suite("Coordinator config alerts")
struct AlertConfigTests {
    private func config(_ alerts: String) throws(ConfigurationError) -> CoordinatorConfiguration {
        try CoordinatorConfiguration.parse(
            yaml: """
                stores:
                  - id: 1
                    departments: [{id: 10, name: Womenswear}, {id: 30, name: Fitting rooms}]
                  - id: 12
                    departments: [{id: 10, name: Clothing}]
                alerts:
                \(alerts)
                """, file: "c.yaml", defaultID: "x")
    }

    @Test("each rule kind is read with its store, cap and quiet hours; the cap is once per visit when not given")
    func rules() throws {
        let rules = try config(
            """
              - {id: vip-arrived, store: 1, when: {memberArrived: {member: {tier: vip}, department: 10}}, cap: 1/visit, quiet: "22:00-07:00"}
              - {id: long-try-on, store: all, when: {dwell: {department: 30, over: 10m}}, cap: 1/30m}
              - {id: node-down, store: 12, when: {nodeOffline: {over: 2m}}}
              - {id: nobody-decides, store: all, when: {storeUndecided: {over: 30s}}}
            """
        ).alerts
        #expect(rules.map(\.id) == ["vip-arrived", "long-try-on", "node-down", "nobody-decides"])
        #expect(rules[0].when == .memberArrived(fields: ["tier": "vip"], department: 10) && rules[0].stores == .one(1))
        #expect(rules[0].quiet?.description == "22:00-07:00" && rules[0].cap == .oncePerVisit)
        #expect(rules[1].when == .dwell(department: 30, over: .seconds(600)) && rules[1].cap == .oncePer(.seconds(1800)))
        #expect(rules[2].when == .nodeOffline(over: .seconds(120)) && rules[2].cap == .oncePerVisit && rules[2].quiet == nil)
        #expect(rules[3].when == .storeUndecided(over: .seconds(30)) && rules[3].stores == .all)
    }

    @Test(
        "a store, department, field, cap or hours the config does not know is one line naming the line and the key",
        arguments: [
            (
                "  - {id: a, store: 7, when: {nodeOffline: {over: 2m}}}",
                "c.yaml:7: alerts[0].store must be all or one of the stores (1, 12)"
            ),
            ("  - {id: a, store: 12, when: {dwell: {department: 30, over: 1m}}}", "c.yaml:7: alerts[0].when.dwell.department 30 is not"),
            (
                "  - {id: a, store: all, when: {memberArrived: {member: {\"ti er\": vip}}}}",
                "c.yaml:7: alerts[0].when.memberArrived.member has a field"
            ),
            (
                "  - {id: a, store: all, when: {memberArrived: {member: {}}}}",
                "c.yaml:7: alerts[0].when.memberArrived.member must be a mapping"
            ),
            (
                "  - {id: a, store: all, when: {nodeOffline: {over: 2m}}, cap: twice}",
                "c.yaml:7: alerts[0].cap must be 1/visit or 1/DURATION"
            ),
            ("  - {id: a, store: all, when: {nodeOffline: {over: 2m}}, quiet: night}", "c.yaml:7: alerts[0].quiet must be local hours"),
            (
                "  - {id: a, store: all, when: {nodeOffline: {over: 0s}}}",
                "c.yaml:7: alerts[0].when.nodeOffline.over must be longer than 0s"
            ),
            ("  - {id: a, store: all, when: {lightning: {over: 2m}}}", "c.yaml:7: unknown key 'lightning' in alerts[0].when"),
            ("  - {id: a, store: all, when: {nodeOffline: {over: 2m}}, sms: yes}", "c.yaml:7: unknown key 'sms' in alerts[0]"),
            ("  - {store: all, when: {nodeOffline: {over: 2m}}}", "c.yaml:7: alerts[0] needs id, store and when"),
            (
                "  - {id: a, store: all, when: {nodeOffline: {over: 2m}}}\n  - {id: a, store: all, when: {storeUndecided: {over: 2m}}}",
                "c.yaml:8: alerts[1].id 'a' appears twice"
            ),
        ])
    func errors(alerts: String, message: String) {
        #expect {
            _ = try config(alerts)
        } throws: { error in
            "\(error)".hasPrefix(message) && !"\(error)".contains("\n")
        }
    }
}
