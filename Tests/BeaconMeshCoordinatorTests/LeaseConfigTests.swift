import BeaconMeshCore
import Testing

@testable import BeaconMeshCoordinator

@Suite("Coordinator config leases")
struct LeaseConfigTests {
    private func config(database: String, lease: String?) throws(ConfigurationError) -> CoordinatorConfiguration {
        try CoordinatorConfiguration.parse(
            yaml: """
                database: "\(database)"
                \(lease.map { "lease: \($0)" } ?? "")
                stores:
                  - id: 1
                    departments: [{id: 10}]
                """, file: "c.yaml", defaultID: "x")
    }

    @Test("lease.ttl is read with a shared PostgreSQL registry, and is 10 s when not given")
    func ttl() throws {
        #expect(try config(database: "postgres://chain@db/chain", lease: "{ttl: 3s}").lease.ttl == .seconds(3))
        #expect(try config(database: "postgres://chain@db/chain", lease: nil).lease.ttl == .seconds(10))
        #expect(try config(database: "shop.sqlite", lease: nil).sharesRegistry == false)
    }

    @Test(
        "lease mistakes are one line naming the line and what is wrong",
        arguments: [
            ("postgres://chain@db/chain", "{ttl: 500ms}", "c.yaml:2: lease.ttl must be from 1s to 10m"),
            ("postgres://chain@db/chain", "{ttl: soon}", "c.yaml:2: lease.ttl must be a duration"),
            ("postgres://chain@db/chain", "{term: 5s}", "c.yaml:2: unknown key 'term' in lease"),
            ("shop.sqlite", "{ttl: 5s}", "c.yaml:2: lease applies only to a shared PostgreSQL database"),
        ])
    func errors(database: String, lease: String, message: String) {
        #expect {
            _ = try config(database: database, lease: lease)
        } throws: { error in
            "\(error)".hasPrefix(message) && !"\(error)".contains("\n")
        }
    }
}
