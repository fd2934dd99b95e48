import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshWire
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// "Unknown beats wrong": a member surely in the store but in no department surely is listed with no department,
/// counted in none, and gets no department's promo; every member entry says how sure the coordinator is.
@Suite("Coordinator unknown department")
struct UnknownDepartmentTests {
    static let start = Timestamp(milliseconds: 1_763_769_600_000)

    static func store() -> CoordinatorConfiguration.Store {
        var store = CoordinatorConfiguration.Store(id: 1, name: "High Street")
        var promo = CoordinatorConfiguration.PromoRule(promo: Promo(id: "shirts", title: "Shirts", message: "10% off"))
        promo.dwell = .zero
        store.departments = [
            .init(id: 10, name: "Clothing", promo: promo, presence: PresenceRules()),
            .init(id: 20, name: "Housewares", presence: PresenceRules()),
        ]
        return store
    }

    static func visit(_ member: String, in department: UInt16, confidence: Double, unknown: Bool) -> PresenceEngine.Visit {
        var visit = PresenceEngine.Visit(
            member: member, store: 1, arrivedAt: start - .seconds(60), department: department,
            inDepartmentSince: start - .seconds(30), lastSeen: start, leftAt: nil, proximity: .near)
        visit.confidence = confidence
        visit.departmentUnknown = unknown
        return visit
    }

    @Test(
        "the snapshot lists a member whose department is unknown with none, counts them in no department, and gives each member's confidence"
    )
    func snapshot() throws {
        let present = [
            (
                visit: Self.visit("ana", in: 10, confidence: 0.3, unknown: true),
                profile: MemberProfile(id: "ana", name: "Ana", favoriteDrink: nil)
            ),
            (
                visit: Self.visit("zoe", in: 20, confidence: 0.9, unknown: false),
                profile: MemberProfile(id: "zoe", name: "Zoë", favoriteDrink: nil)
            ),
        ]
        let snapshot = SnapshotSource(store: Self.store(), present: present, guests: [:], nodes: [], at: Self.start).snapshot()
        let ana = try #require(snapshot.members.first { $0.member.id == "ana" })
        #expect(ana.department == nil && ana.departmentName == nil)
        #expect(ana.confidence == 0.3)
        let zoe = try #require(snapshot.members.first { $0.member.id == "zoe" })
        #expect(zoe.department == 20 && zoe.departmentName == "Housewares" && zoe.confidence == 0.9)
        #expect(snapshot.occupancy[10]?.members == 0, "Ana's last department does not count her")
        #expect(snapshot.occupancy[20]?.members == 1)
    }

    @Test("a member in a promo's department gets the promo, but not while their department is unknown", arguments: [false, true])
    func noPromoWhileUnknown(unknown: Bool) throws {
        var configuration = CoordinatorConfiguration(id: "test")
        configuration.stores = [Self.store()]
        var logger = Logger(label: "test.unknown-department")
        logger.logLevel = .critical
        let ana = MemberProfile(id: "ana", name: "Ana", favoriteDrink: nil, visits: 4)
        let contents = RegistryContents(profiles: ["ana": ana], beaconOwners: [:], promoFires: [:])
        var state = CoordinatorState(
            configuration: configuration,
            start: .init(contents: contents, visits: [Self.visit("ana", in: 10, confidence: 0.4, unknown: unknown)], handledCheckins: []),
            logger: logger, topics: Topics(), startedAt: Self.start, healthInterval: .seconds(30), eventPrefix: "t")
        let actions = state.tick(at: Self.start + .milliseconds(50))
        let events = CoordinatorDecisionTests.events(actions)
        #expect(events.map(\.type) == (unknown ? [] : ["promo"]))
    }
}
