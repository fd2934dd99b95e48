import BeaconMeshCore
import Foundation
import Testing

@testable import BeaconMeshCoordinator

@Suite("Coordinator config promos")
struct PromoConfigTests {
    private func config(_ promo: String) throws(ConfigurationError) -> CoordinatorConfiguration {
        try CoordinatorConfiguration.parse(
            yaml: """
                stores:
                  - id: 1
                    departments:
                      - id: 10
                        promo: {id: p, title: T, message: M, \(promo)}
                """, file: "c.yaml", defaultID: "x")
    }

    @Test("validity and audience keys are read")
    func keys() throws {
        let rule = try #require(
            try config("from: 2026-11-01, until: 2026-11-30, hours: '08:00-11:30', minVisits: 10, members: [ana, ben]")
                .stores[0].departments[0].promo)
        #expect(rule.window.from == PromoWindow.Day(year: 2026, month: 11, day: 1))
        #expect(rule.window.hours?.description == "08:00-11:30")
        #expect(rule.audience == PromoAudience(minVisits: 10, members: ["ana", "ben"]))
    }

    @Test(
        "promo mistakes name the line",
        arguments: [
            ("from: 2026-13-01", "c.yaml:5: stores[0].departments[0].promo.from must be a date YYYY-MM-DD"),
            ("from: 2026-11-30, until: 2026-11-01", "c.yaml:5: stores[0].departments[0].promo.until (2026-11-01) is before"),
            ("hours: 8-12", "c.yaml:5: stores[0].departments[0].promo.hours must be HH:MM-HH:MM"),
            ("minVisits: 0", "c.yaml:5: stores[0].departments[0].promo.minVisits must be a whole number of at least 1"),
            ("proximity: close", "c.yaml:5: stores[0].departments[0].promo.proximity must be immediate, near or far"),
            ("colour: red", "c.yaml:5: unknown key 'colour'"),
        ])
    func errors(promo: String, message: String) {
        #expect {
            _ = try config(promo)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }
}

@Suite("Coordinator config greetings")
struct GreetingConfigTests {
    @Test("a store's firstVisitGreeting is read; without one the first visit gets the store's greeting")
    func firstVisitGreeting() throws {
        let configuration = try CoordinatorConfiguration.parse(
            yaml: """
                stores:
                  - {id: 1, greeting: "Hello again, {name}!", firstVisitGreeting: "Welcome, {name}!"}
                  - {id: 2, greeting: "Hello again, {name}!"}
                """, file: "c.yaml", defaultID: "x")
        #expect(configuration.stores[0].greeting(forVisit: 1).text == "Welcome, {name}!")
        #expect(configuration.stores[0].greeting(forVisit: 2).text == "Hello again, {name}!")
        #expect(configuration.stores[1].greeting(forVisit: 1).text == "Hello again, {name}!")
        #expect {
            try CoordinatorConfiguration.parse(yaml: "stores:\n  - {id: 1, firstVisitGreeting: [a]}", file: "c.yaml", defaultID: "x")
        } throws: { error in
            "\(error)".contains("firstVisitGreeting")
        }
    }

    @Test("a store's timeZone is an IANA name (default the coordinator's); anything else exits 2 naming the line and the key")
    func timeZone() throws {
        let configuration = try CoordinatorConfiguration.parse(
            yaml: "stores:\n  - {id: 1, timeZone: Europe/Lisbon}\n  - {id: 2}", file: "c.yaml", defaultID: "x")
        #expect(configuration.stores[0].timeZone?.identifier == "Europe/Lisbon" && configuration.stores[1].timeZone == nil)
        #expect {
            try CoordinatorConfiguration.parse(yaml: "stores:\n  - {id: 1, timeZone: Mars/Olympus}", file: "c.yaml", defaultID: "x")
        } throws: { error in
            "\(error)".hasPrefix("c.yaml:2: stores[0].timeZone 'Mars/Olympus' is not a time zone") && !"\(error)".contains("\n")
        }
    }
}
