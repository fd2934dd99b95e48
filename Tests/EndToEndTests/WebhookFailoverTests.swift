import BeaconMeshTesting
import Foundation
import Synchronization
import Testing

/// Webhooks with leases: two coordinators on one PostgreSQL registry, one outbox; only the store's holder delivers,
/// and the standby that takes the store over delivers what the holder left.
@Suite("webhooks across a lease take-over", .serialized)
struct WebhookFailoverTests {
    @Test("kill -9 the holder mid-backlog: the standby delivers every event, in order, each at most once more")
    func holderKilledMidBacklog() async throws {
        let chain = try await LeaseChain.start()
        let certificates = try await TestCertificates.generate(in: chain.base.directory + "/tls")
        let open = Flag()
        let receiver = try await WebhookReceiver.start(certificates: certificates) { _ in open.isSet ? .status(200) : .status(503) }
        defer { Task { await receiver.stop() } }
        let secret = "chain-secret-\(UUID().uuidString)"
        try secret.write(toFile: chain.base.directory + "/crm.secret", atomically: true, encoding: .utf8)
        let webhooks = """
            webhooks:
              - {name: crm, url: "\(receiver.url)", secretFile: crm.secret, events: [arrived, left, node], cafile: \(certificates.caCertificate)}
            """
        let north = try await chain.startCoordinator(id: "north", stores: [1], extra: webhooks)
        #expect(await chain.waitUntil("north", decides: [1], timeout: .seconds(10)), "\(north.transcript)")
        let south = try await chain.startCoordinator(id: "south", stores: [1], extra: webhooks)
        #expect(await eventually(timeout: .seconds(10)) { chain.status(of: "south")?["state"] as? String == "online" })

        try await chain.walk(store: 1, minor: 1, seconds: 3)
        #expect(await chain.waitFor("left", store: 1, member: "ana", timeout: .seconds(15)), "\(north.transcript)")
        // The holder is retrying the first event (its deliveries wait in the outbox); the standby delivers nothing.
        let firstID = try #require(chain.eventLines(store: 1).first.flatMap(Mesh.payload(of:))?["id"] as? String)
        #expect(await receiver.waitFor(2, timeout: .seconds(10)) { $0.eventID == firstID }, "\(north.transcript)")
        // Mid-backlog: every event north published waits in the outbox. (An event on MQTT whose row the writer has not
        // committed yet — a few milliseconds — is not delivered after a kill -9: the new holder decides that change
        // again, under an id of its own, as it does for MQTT.)
        let owed = chain.eventLines(store: 1).count
        let database = String(chain.base.url.split(separator: "/").last ?? "")
        #expect(
            await eventually(timeout: .seconds(10), interval: .milliseconds(100)) {
                (try? chain.server.psql("SELECT count(*) FROM webhook_outbox", database: database))?.hasPrefix("\(owed)") == true
            })
        north.send(SIGKILL)
        #expect(await chain.waitUntil("south", decides: [1], timeout: .seconds(LeaseChain.ttl + 5)), "\(south.transcript)")
        open.set()
        // Kim arrives after the take-over: the new holder's events follow the old holder's.
        try await chain.walk(store: 1, minor: 5, seconds: 3)
        #expect(await chain.waitFor("left", store: 1, member: "kim", timeout: .seconds(15)))
        let published = chain.eventLines(store: 1).compactMap(Mesh.payload(of:)).compactMap { $0["id"] as? String }
        #expect(
            await receiver.waitFor(timeout: .seconds(60)) { _ in Set(receiver.deduplicated.map(\.eventID)).isSuperset(of: published) },
            "\(receiver.deduplicated.map(\.eventID)) vs \(published)\n\(south.transcript)")
        #expect(receiver.deduplicated.map(\.eventID) == published)
        // Delivered (a 200) at most twice: once by each holder, never more.
        let delivered = receiver.received.filter { $0.status == 200 }
        let counts = Dictionary(grouping: delivered.map(\.eventID), by: { $0 }).mapValues(\.count)
        #expect(counts.values.allSatisfy { $0 <= 2 }, "\(counts)")
        #expect(receiver.received.allSatisfy { WebhookReceiver.verifies($0, secret: Array(secret.utf8)) })
        await chain.stop([south])
    }
}

/// A flag one side sets and the other reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
