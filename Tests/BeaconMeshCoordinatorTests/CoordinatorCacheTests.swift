import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshWire
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// The decisions of a coordinator on a shared registry that keeps a local cache, and of one started from it.
@Suite("Coordinator decisions with a local cache")
struct CoordinatorCacheTests {
    typealias D = CoordinatorDecisionTests
    typealias L = CoordinatorLeaseTests

    static func configuration() -> CoordinatorConfiguration {
        var configuration = L.state().configuration
        configuration.cache = "/tmp/never-written.cache"
        return configuration
    }

    static func state(from start: CoordinatorState.Start) -> CoordinatorState {
        var logger = Logger(label: "test.cache")
        logger.logLevel = .critical
        return CoordinatorState(
            configuration: configuration(), start: start, logger: logger, topics: Topics(), startedAt: D.start,
            healthInterval: .seconds(30), leaseTTL: L.ttl)
    }

    static func cache(fenced: Bool) -> CoordinatorCacheDocument {
        CoordinatorCacheDocument(
            coordinator: "backoffice-2", database: "postgres://chain@db/chain", savedAt: D.start - .seconds(60),
            leases: [1: LeaseGrant(since: D.start - .seconds(3600), fenced: fenced)],
            members: [
                .init(
                    profile: MemberProfile(id: "ana", name: "Ana", favoriteDrink: "flat white", visits: 4), beacons: [D.anaFob],
                    promoFires: [:])
            ],
            visits: [], handledCheckins: [:], surveys: [:])
    }

    @Test("started from a cache, it decides at once the stores it held that nobody stood by for, and greets from the cache")
    func decidesFromTheCache() throws {
        var state = Self.state(from: .init(cache: Self.cache(fenced: false)))
        #expect(state.active == [1])
        var seq: UInt64 = 0
        let actions = L.walk(&state, from: D.start, seconds: 3, seq: &seq, monotonic: L.instant)
        let arrived = actions.flatMap(D.events).filter { $0.type == "arrived" }
        #expect(arrived.count == 1)
        #expect(actions.allSatisfy { $0.takeOvers.isEmpty }, "nothing to load: it continues from the cache")
        // The database answers later and keeps the lease for it: it goes on deciding, with no take-over.
        let now = D.start + .seconds(3)
        let renewal = state.leasesRenewed(
            [1: .init(since: D.start - .seconds(3600), fenced: false)], sentAt: L.instant(now), at: now, instant: L.instant(now))
        #expect(renewal.takeOvers.isEmpty && state.active == [1])
    }

    @Test("a store another coordinator stood by for is not decided from the cache: the standby takes it over")
    func fencedStoreWaits() throws {
        var state = Self.state(from: .init(cache: Self.cache(fenced: true)))
        #expect(state.active.isEmpty)
        var seq: UInt64 = 0
        let actions = L.walk(&state, from: D.start, seconds: 3, seq: &seq, monotonic: L.instant)
        #expect(actions.flatMap(D.events).isEmpty)
    }

    @Test(
        "the cache is handed out at the first tick, at once after a take-over, within 5 s of a greeting, and holds the visit, the count and the lease"
    )
    func cacheIsKept() throws {
        let contents = RegistryContents(
            profiles: ["ana": MemberProfile(id: "ana", name: "Ana", visits: 4)], beaconOwners: [D.anaFob: "ana"], promoFires: [:])
        var state = Self.state(from: .init(contents: contents, visits: [], handledCheckins: []))
        let first = state.tick(at: D.start)
        #expect(first.cache != nil, "due at the first tick")
        #expect(first.cache?.leases.isEmpty == true, "no lease held yet")
        _ = state.leasesRenewed([1: .init(since: D.start, fenced: false)], sentAt: L.t0, at: D.start, instant: L.t0)
        _ = state.tookOver(
            [1], loaded: .init(stores: [1], visits: [], promoFires: [:], handledCheckins: []), at: D.start, instant: L.t0)
        var seq: UInt64 = 0
        let actions = L.walk(&state, from: D.start + .milliseconds(50), seconds: 8, seq: &seq, monotonic: L.instant)
        let caches = actions.compactMap(\.cache)
        // At once after the take-over (a cold start must know the lease), then 5 s after the greeting; not at every tick.
        #expect(caches.map(\.savedAt) == [D.start + .milliseconds(50), D.start + .milliseconds(5050)], "\(caches.map(\.savedAt))")
        #expect(caches.first?.leases == [1: LeaseGrant(since: D.start, fenced: false)])
        let document = try #require(caches.last).document()
        #expect(document.leases == [1: LeaseGrant(since: D.start, fenced: false)])
        #expect(document.members.map(\.profile.visits) == [5], "the visit counted")
        #expect(document.members.first?.beacons == [D.anaFob])
        #expect(document.visits.map(\.member) == ["ana"])
        // Read back, it starts a state that knows Ana is in the store: no second greeting.
        var restarted = Self.state(from: .init(cache: try WireCodec.decodeCoordinatorCache(WireCodec.encode(document))))
        let later = L.walk(&restarted, from: D.start + .seconds(9), seconds: 2, seq: &seq, monotonic: L.instant)
        #expect(later.flatMap(D.events).filter { $0.type == "arrived" }.isEmpty)
    }

    @Test("registry writes kept in the cache read back as they were, through the cache's JSON; another shape is refused")
    func pendingWritesRoundTrip() throws {
        var changes = RegistryChanges()
        changes.save(
            PresenceEngine.Visit(
                member: "ana", store: 1, arrivedAt: D.start, department: 10, inDepartmentSince: D.start + .seconds(5),
                lastSeen: D.start + .seconds(9), leftAt: nil, proximity: .immediate))
        changes.endVisit(of: "zoe")
        changes.countVisit(of: "ana", visits: 2, at: D.start + .seconds(1))
        changes.promoFired("latte", member: "ana", store: 1, at: D.start + .seconds(2))
        changes.countCheckin(of: "ana", count: 3)
        changes.handledCheckinRequest("req-9", at: D.start + .seconds(3))
        changes.forgetCheckinRequests(before: D.start - .seconds(86_400))
        changes.registryEventPublished(42)
        changes.addGuests(.init(visits: 2, dwell: .seconds(90)), at: .init(store: 1, hour: D.start, department: 10))
        changes.forgetHistory(before: D.start - .seconds(3_600))
        changes.decidedBy = "backoffice-2"
        let owed = [
            WebhookDelivery(
                endpoint: "crm", store: 1, eventID: "c/1", body: Array(#"{"v":1,"id":"c/1","member":{"name":"Zoë \"Z\""}}"#.utf8),
                personalDataOf: "zoe", createdAt: D.start),
            WebhookDelivery(endpoint: "bi", store: 2, eventID: "c/2", body: Array("{}".utf8), createdAt: D.start + .seconds(1)),
        ]
        for delivery in owed { changes.queueWebhook(delivery) }
        let document = CoordinatorCacheDocument(
            coordinator: "c", database: "d", savedAt: D.start, leases: [:], members: [], visits: [], handledCheckins: [:], surveys: [:],
            pendingWrites: [.init(id: "w-1", changes: changes.cacheValue)])
        let read = try WireCodec.decodeCoordinatorCache(WireCodec.encode(document))
        let back = try #require(RegistryChanges(cacheValue: read.pendingWrites[0].changes))
        #expect(back.visits == changes.visits)
        #expect(back.counts.mapValues(\.visits) == ["ana": 2] && back.counts["ana"]?.at == D.start + .seconds(1))
        #expect(back.promoFires == changes.promoFires && back.checkins == ["ana": 3])
        #expect(back.checkinRequests == changes.checkinRequests && back.publishedRegistryEvents == [42])
        #expect(back.guestCounts == changes.guestCounts)
        #expect(back.forgetCheckinRequestsBefore == changes.forgetCheckinRequestsBefore)
        #expect(back.forgetHistoryBefore == changes.forgetHistoryBefore && back.decidedBy == "backoffice-2")
        #expect(back.webhookDeliveries == owed, "webhook deliveries owed survive a restart during an outage, in order")
        #expect(RegistryChanges(cacheValue: .object([("counts", .array([.object([("member", .int(1))])]))])) == nil)
        #expect(RegistryChanges(cacheValue: .string("x")) == nil)
    }
}
