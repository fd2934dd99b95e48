import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Logging
import Testing

@testable import BeaconMeshRegistry

/// The writes a coordinator keeps in its local cache while the database is away: sealed under an id, and written at
/// most once by that id after a restart.
@Suite("Registry writes kept for a restart")
struct PendingWriteTests {
    static func writer(_ registry: any MemberRegistry) throws -> RegistryWriter {
        try RegistryWriter(
            registry: registry, stores: [1], logger: Logger(label: "test"),
            clock: { Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)) })
    }

    static func visit(of member: String, at milliseconds: Int64) -> RegistryChanges {
        var changes = RegistryChanges()
        changes.countVisit(of: member, at: Timestamp(milliseconds: milliseconds))
        changes.promoFired("latte", member: member, store: 1, at: Timestamp(milliseconds: milliseconds))
        return changes
    }

    @Test("what waits is sealed under one id, and what comes later joins that batch until it is taken", arguments: Backend.allCases)
    func sealing(backend: Backend) async throws {
        let registry = try backend.makeRegistry()
        let writer = try Self.writer(registry)
        // A stopped writer takes nothing: everything queued waits, as behind a database that is away.
        #expect(await writer.close(timeout: .seconds(10)))
        writer.enqueue(Self.visit(of: "ana", at: 1))
        let first = writer.pendingBatches()
        #expect(first.count == 1 && first[0].changes.counts["ana"]?.visits == 1)
        writer.enqueue(Self.visit(of: "ana", at: 2))
        writer.enqueue(Self.visit(of: "zoe", at: 3))
        let second = writer.pendingBatches()
        #expect(second.map(\.id) == first.map(\.id), "one batch, one id")
        #expect(second[0].changes.counts["ana"]?.visits == 2 && second[0].changes.counts["zoe"]?.visits == 1)
        #expect(writer.status.queued == second[0].changes.count)
    }

    @Test("a batch replayed under its id is written once, however often it is replayed", arguments: Backend.allCases)
    func replayedOnce(backend: Backend) async throws {
        let registry = try backend.makeRegistry()
        try registry.merge(
            try MembersCSV.parse(
                "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\nana,Ana,,,,11,,", file: "m.csv"))
        for _ in 0..<3 {
            let writer = try Self.writer(registry)
            writer.enqueue(batch: Self.visit(of: "ana", at: 1_000), id: "run-1-sealed-1")
            #expect(await writer.close(timeout: .seconds(10)))
        }
        #expect(try registry.member(id: "ana")?.profile.visits == 12)
        let other = try Self.writer(registry)
        other.enqueue(batch: Self.visit(of: "ana", at: 2_000), id: "run-2-sealed-1")
        #expect(await other.close(timeout: .seconds(10)))
        #expect(try registry.member(id: "ana")?.profile.visits == 13)
    }
}
