import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

@testable import BeaconMeshRegistry

/// The stores' leases on a real PostgreSQL server (the tests' shared one), timed by its clock.
@Suite("Store leases")
struct StoreLeaseTests {
    private static func leases() throws -> (String, PostgresLeases, PostgresLeases) {
        let server = try PostgresServer.shared()
        let url = try server.createDatabase()
        let registry = try #require(try RegistryLocation(url).open(environment: [:]) as? PostgresRegistry)
        return (url, try registry.leases(timeout: .seconds(2)), try registry.leases(timeout: .seconds(2)))
    }

    /// The lease tables' rows, for a failure message.
    private static func rows(_ url: String) -> String {
        let database = String(url.split(separator: "/").last ?? "")
        let server = try? PostgresServer.shared()
        return (try? server?.psql("SELECT *, now() FROM store_lease; SELECT *, now() FROM lease_candidate", database: database)) ?? "?"
    }

    @Test("one holder per store: a second is refused until the first's lease runs out, then takes it with a new since")
    func oneHolder() async throws {
        let (url, first, second) = try Self.leases()
        let held = try first.claim([1, 2], for: "north", ttl: .seconds(4))
        #expect(Set(held.keys) == [1, 2])
        #expect(held.values.allSatisfy { !$0.fenced }, "nobody stands by yet")
        #expect(try second.claim([2, 3], for: "south", ttl: .seconds(4)).keys.sorted() == [3])
        // Renewed: the same hold goes on (its since stays), and north learns that south stands by for store 2 (south
        // counts as standing by for three ttls after its claim: 12 s, time enough on a loaded machine).
        let renewed = try first.claim([1, 2], for: "north", ttl: .seconds(4))
        #expect(renewed.mapValues(\.since) == held.mapValues(\.since))
        #expect(renewed[2]?.fenced == true && renewed[1]?.fenced == false, "\(renewed) \(Self.rows(url))")
        #expect(try first.holders()[2]?.holder == "north")
        // North stops renewing: after the ttl, by the database's clock, south holds store 2 from now on.
        try await Task.sleep(for: .milliseconds(4300))
        let taken = try second.claim([2, 3], for: "south", ttl: .seconds(4))
        #expect(taken.keys.sorted() == [2, 3])
        #expect(try #require(taken[2]).since > held[2]!.since)
        #expect(try first.claim([1, 2], for: "north", ttl: .seconds(4)).keys.sorted() == [1])
    }

    @Test(
        "a lease whose holder did not know of a standby is kept for a grace after it runs out (a live holder renews and learns of the standby), then taken"
    )
    func unfencedIsTakenAfterGrace() async throws {
        let (_, first, second) = try Self.leases()
        // Grace: a quarter of the 2-s ttl, 500 ms.
        #expect(try first.claim([7], for: "north", ttl: .seconds(2))[7]?.fenced == false)
        // North goes quiet (dead, or cut off) before it learns of south.
        #expect(try second.claim([7], for: "south", ttl: .seconds(2)).isEmpty)
        try await Task.sleep(for: .milliseconds(2100))
        #expect(try second.claim([7], for: "south", ttl: .seconds(2)).isEmpty, "within the grace: still north's")
        #expect(try second.holders()[7]?.holder == "north")
        try await Task.sleep(for: .milliseconds(800))
        let taken = try second.claim([7], for: "south", ttl: .seconds(2))
        #expect(taken[7] != nil, "past the grace, south holds it")
        #expect(try first.claim([7], for: "north", ttl: .seconds(2)).isEmpty, "north, back, learns it lost the store")
    }

    @Test("visit rows decided by a coordinator whose store another now holds are not written; counts are")
    func staleVisitWritesFenced() throws {
        let server = try PostgresServer.shared()
        let registry = try RegistryLocation(try server.createDatabase()).open(environment: [:])
        let leases = try #require(registry as? PostgresRegistry).leases(timeout: .seconds(2))
        try registry.merge([MemberRecord(profile: MemberProfile(id: "ana", name: "Ana"), beacons: [], createdAt: nil)])
        _ = try leases.claim([1], for: "south", ttl: .seconds(30))
        let at = Timestamp(milliseconds: 1_763_769_600_000)
        let visit = PresenceEngine.Visit(
            member: "ana", store: 1, arrivedAt: at, department: 10, inDepartmentSince: at, lastSeen: at, leftAt: nil)
        // North decided this before the database went away; south took the store over meanwhile.
        var stale = RegistryChanges()
        stale.save(visit)
        stale.countVisit(of: "ana", at: at)
        stale.decidedBy = "north"
        try registry.apply(stale)
        #expect(try registry.loadVisits(stores: [1]).isEmpty)
        #expect(try registry.member(id: "ana")?.profile.visits == 1, "the count is what was announced: it is written")
        var fresh = RegistryChanges()
        fresh.save(visit)
        fresh.decidedBy = "south"
        try registry.apply(fresh)
        #expect(try registry.loadVisits(stores: [1]).map(\.member) == ["ana"])
        var staleEnd = RegistryChanges()
        staleEnd.endVisit(of: "ana")
        staleEnd.decidedBy = "north"
        try registry.apply(staleEnd, batch: nil, stores: [1])
        #expect(try registry.loadVisits(stores: [1]).map(\.member) == ["ana"], "north cannot end south's visit")
    }

    @Test("a released lease is free at once")
    func release() throws {
        let (_, first, second) = try Self.leases()
        _ = try first.claim([5], for: "north", ttl: .seconds(30))
        #expect(try second.claim([5], for: "south", ttl: .seconds(30)).isEmpty)
        try first.release([5], for: "north")
        #expect(try second.claim([5], for: "south", ttl: .seconds(30)).keys.sorted() == [5])
        #expect(try first.holders()[5]?.holder == "south")
    }

    @Test("a second coordinator on one SQLite registry is refused in one line; the first's end frees it")
    func soleCoordinatorOnSQLite() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lease-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var first: SoleCoordinatorLock? = try SoleCoordinatorLock(database: folder + "/shop.sqlite")
        let refusal = #expect(throws: RegistryFailure.self) { _ = try SoleCoordinatorLock(database: folder + "/shop.sqlite") }
        #expect(refusal?.kind == .heldByAnotherCoordinator)
        #expect(refusal?.description.contains("another coordinator runs on the SQLite registry") == true)
        #expect(refusal?.description.contains("\n") == false)
        withExtendedLifetime(first) {}
        first = nil
        // (A process another test spawns at that moment may hold the descriptor until it runs its program.)
        #expect(await eventually(timeout: .seconds(2)) { (try? SoleCoordinatorLock(database: folder + "/shop.sqlite")) != nil })
    }
}
