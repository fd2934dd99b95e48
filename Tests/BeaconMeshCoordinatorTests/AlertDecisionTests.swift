import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshWire
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// Alerts in the coordinator's decisions: the config's rules see the events the decisions publish and the ticks, and
/// what fires goes to the store's `alerts` topic (QoS 1, not retained) under an id of its own.
@Suite("Coordinator decisions: alerts")
struct AlertDecisionTests {
    static func state(alerts: [AlertRule]) -> CoordinatorState {
        var configuration = CoordinatorConfiguration(id: "test")
        var store = CoordinatorConfiguration.Store(id: 1, name: "High Street")
        store.departments = [.init(id: 10, name: "Clothing", presence: PresenceRules())]
        configuration.stores = [store]
        configuration.alerts = alerts
        var logger = Logger(label: "test.alerts")
        logger.logLevel = .critical
        let ana = MemberProfile(id: "ana", name: "Ana Souza", visits: 4, customFields: ["tier": "vip"])
        let contents = RegistryContents(
            profiles: ["ana": ana], beaconOwners: [CoordinatorDecisionTests.anaFob: "ana"], promoFires: [:])
        return CoordinatorState(
            configuration: configuration, start: .init(contents: contents, visits: [], handledCheckins: []),
            logger: logger, topics: Topics(), startedAt: CoordinatorDecisionTests.start, healthInterval: .seconds(30), eventPrefix: "t")
    }

    static func alerts(_ actions: [CoordinatorActions]) -> [(Publication, Alert)] {
        actions.flatMap(\.publications).compactMap { publication in
            if case .alert(let alert) = publication.message { (publication, alert) } else { nil }
        }
    }

    @Test("a VIP's arrival is an alert on the store's alerts topic once; her stay past the dwell another, once")
    func vipAndDwell() throws {
        var state = Self.state(alerts: [
            AlertRule(id: "vip-arrived", stores: .all, when: .memberArrived(fields: ["tier": "vip"], department: nil)),
            AlertRule(id: "long-stay", stores: .one(1), when: .dwell(department: 10, over: .seconds(5))),
        ])
        var seq: UInt64 = 0
        let actions = CoordinatorDecisionTests.walk(
            &state, in: CoordinatorDecisionTests.clothing, from: CoordinatorDecisionTests.start, seconds: 9, seq: &seq)
        let alerts = Self.alerts(actions)
        #expect(alerts.map(\.1.rule) == ["vip-arrived", "long-stay"], "\(alerts.map(\.1))")
        #expect(alerts.allSatisfy { $0.0.topic == "beaconmesh/v1/stores/1/alerts" && $0.0.qos == .atLeastOnce && !$0.0.retain })
        let arrived = try #require(actions.flatMap(CoordinatorDecisionTests.events).first { $0.type == "arrived" })
        let vip = try #require(alerts.first?.1)
        #expect(vip.text == "Ana Souza (tier vip) arrived in Clothing" && vip.at == arrived.at && vip.member?.id == "ana")
        #expect(Set(alerts.map(\.1.id)).count == 2 && !alerts.contains { $0.1.id == arrived.id }, "ids of their own")
        let stay = try #require(alerts.last?.1)
        #expect(stay.text == "Ana Souza has been in Clothing for 5 s" && stay.at - arrived.at >= .seconds(5))
        #expect(stay.at - arrived.at <= .seconds(6), "within a second of its moment")
        // The payload as a staff app reads it.
        let decoded = try WireCodec.decodeAlert(WireCodec.encode(vip))
        #expect(decoded == vip)
    }

    @Test("without rules nothing is published on the alerts topic")
    func noRules() {
        var state = Self.state(alerts: [])
        var seq: UInt64 = 0
        let actions = CoordinatorDecisionTests.walk(
            &state, in: CoordinatorDecisionTests.clothing, from: CoordinatorDecisionTests.start, seconds: 6, seq: &seq)
        #expect(Self.alerts(actions).isEmpty)
        #expect(actions.flatMap(CoordinatorDecisionTests.events).contains { $0.type == "arrived" })
    }
}
