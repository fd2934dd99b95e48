import BeaconMeshTesting
import Foundation
import Testing

/// A chain's coordinators whose `webhooks:` lists differ (issue 53 item 6): the outbox is keyed by endpoint name, so
/// a store one of them takes over from the other would be delivered to another list. Real coordinators on one
/// PostgreSQL registry (`LeaseChain`, a lease of 2 s, health every second).
@Suite("webhook lists across a chain", .serialized)
struct WebhookListEndToEndTests {
    static let crm = #"  - {name: crm, url: "http://127.0.0.1:9/crm", secretFile: crm.secret, events: [arrived, left]}"#
    static let erp = #"  - {name: erp, url: "http://127.0.0.1:9/erp", secretFile: erp.secret, events: [arrived]}"#

    /// The `webhookListsDiffer` of `id`'s next health report (`[]` when it has none), within 10 s.
    static func listsDiffer(of id: String, in chain: LeaseChain) async throws -> [[String: Any]]? {
        let health = try await MosquittoClients.subscribe(port: chain.broker.port, filter: "beaconmesh/v1/coordinators/\(id)/health")
        let line = await health.waitForLine(timeout: .seconds(10)) { _ in true }
        await health.stop()
        return line.flatMap(Mesh.payload(of:)).map { ($0["webhookListsDiffer"] as? [[String: Any]]) ?? [] }
    }

    @Test(
        "a coordinator started with another webhooks: list than its chain's says so at its start in one line naming both ids, and both say so in health until it stops; the same list says nothing"
    )
    func differentListsAreNamed() async throws {
        let chain = try await LeaseChain.start()
        for name in ["crm", "erp"] {
            try "\(name)-secret-\(UUID().uuidString)".write(
                toFile: chain.base.directory + "/\(name).secret", atomically: true, encoding: .utf8)
        }
        let north = try await chain.startCoordinator(id: "north", stores: [1], extra: "webhooks:\n" + Self.crm)
        #expect(await chain.waitUntil("north", decides: [1], timeout: .seconds(10)), "\(north.transcript)")
        let east = try await chain.startCoordinator(id: "east", stores: [1], extra: "webhooks:\n" + Self.crm)
        let south = try await chain.startCoordinator(id: "south", stores: [1], extra: "webhooks:\n" + Self.crm + "\n" + Self.erp)

        // South learns of the others at its first renewal, a fraction of the ttl after its start.
        let named = await south.waitForLine(in: .stderr, timeout: .seconds(10)) { $0.contains("differ from coordinator") }
        let line = try #require(named, "\(south.transcript)")
        #expect(
            line.contains("the webhooks: of coordinator south (crm, erp) differ from coordinator east's (crm)")
                || line.contains("the webhooks: of coordinator south (crm, erp) differ from coordinator north's (crm)"), "\(line)")
        #expect(!line.contains("secret"), "\(line)")

        // North learns of south at its next renewal; its health names south from then on (the next report, or the one after).
        let northSays = await eventually(timeout: .seconds(10), interval: .milliseconds(100)) { () async -> [[String: Any]]? in
            guard let lists = try? await Self.listsDiffer(of: "north", in: chain), !lists.isEmpty else { return nil }
            return lists
        }
        #expect(northSays?.map { $0["coordinator"] as? String } == ["south"], "\(northSays ?? [])\n\(north.transcript)")
        #expect(northSays?.first?["endpoints"] as? [String] == ["crm", "erp"])
        let southSays = await eventually(timeout: .seconds(10), interval: .milliseconds(100)) { () async -> [[String: Any]]? in
            guard let lists = try? await Self.listsDiffer(of: "south", in: chain), lists.count == 2 else { return nil }
            return lists
        }
        #expect(southSays?.compactMap { $0["coordinator"] as? String } == ["east", "north"], "\(southSays ?? [])")

        // Said once per coordinator, not at every renewal (a renewal every half second: four of them meanwhile).
        try await Task.sleep(for: .seconds(2))
        let southLines = south.stderrLines.filter { $0.contains("differ from coordinator") }
        #expect(southLines.count == 2 && southLines.contains { $0.contains("north's") } && southLines.contains { $0.contains("east's") })
        #expect(north.stderrLines.filter { $0.contains("differ from coordinator south's (crm, erp)") }.count == 1, "\(north.transcript)")
        #expect(!north.stderrLines.contains { $0.contains("coordinator east") }, "north and east have the same list")
        #expect(!east.stderrLines.contains { $0.contains("coordinator north") }, "east and north have the same list")

        // South stops (it releases its leases and stops standing by): nobody names it any more.
        _ = await south.stop(with: SIGTERM, timeout: .seconds(10))
        #expect(
            await eventually(timeout: .seconds(10), interval: .milliseconds(100)) {
                (try? await Self.listsDiffer(of: "north", in: chain))?.isEmpty == true
            },
            "\(north.transcript)")
        await chain.stop([north, east])
    }
}
