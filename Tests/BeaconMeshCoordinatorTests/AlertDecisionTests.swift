import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshWire
import Foundation
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// Alerts in the coordinator's decisions: the config's rules see the events the decisions publish and the ticks, and
/// what fires goes to the store's `alerts` topic (QoS 1, not retained) under an id of its own.
@Suite("Coordinator decisions: alerts")
struct AlertDecisionTests {
    static func state(alerts: [AlertRule], timeZone: TimeZone? = nil, surveyMarks: [SurveyMarkRecord] = []) -> CoordinatorState {
        var configuration = CoordinatorConfiguration(id: "test")
        var store = CoordinatorConfiguration.Store(id: 1, name: "High Street")
        store.timeZone = timeZone
        store.departments = [.init(id: 10, name: "Clothing", presence: PresenceRules())]
        configuration.stores = [store]
        configuration.alerts = alerts
        var logger = Logger(label: "test.alerts")
        logger.logLevel = .critical
        let ana = MemberProfile(id: "ana", name: "Ana Souza", visits: 4, customFields: ["tier": "vip"])
        let contents = RegistryContents(
            profiles: ["ana": ana], beaconOwners: [CoordinatorDecisionTests.anaFob: "ana"], promoFires: [:])
        return CoordinatorState(
            configuration: configuration, start: .init(contents: contents, visits: [], handledCheckins: [], surveyMarks: surveyMarks),
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

    @Test(
        "quiet hours are the store's local time: 22:00-07:00 holds a VIP's alert at midnight in London, not at 09:00 in Tokyo (the same instant)"
    )
    func quietHoursInTheStoresTimeZone() throws {
        // The walk starts at 2025-11-22 00:00 UTC.
        let quiet = try #require(PromoWindow.Hours("22:00-07:00"))
        let rule = AlertRule(id: "vip-arrived", stores: .all, when: .memberArrived(fields: ["tier": "vip"], department: nil), quiet: quiet)
        for (zone, sent) in [("Asia/Tokyo", true), ("Europe/London", false)] {
            var state = Self.state(alerts: [rule], timeZone: TimeZone(identifier: zone))
            var seq: UInt64 = 0
            let actions = CoordinatorDecisionTests.walk(
                &state, in: CoordinatorDecisionTests.clothing, from: CoordinatorDecisionTests.start, seconds: 6, seq: &seq)
            #expect(actions.flatMap(CoordinatorDecisionTests.events).contains { $0.type == "arrived" })
            #expect(Self.alerts(actions).map(\.1.rule) == (sent ? ["vip-arrived"] : []), "\(zone)")
        }
    }

    @Test("a store's local day and minute follow its zone across midnight and a change to summer time")
    func localCalendar() throws {
        let lisbon = try #require(TimeZone(identifier: "Europe/Lisbon"))
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        // 2026-03-28 23:30 UTC: still the 28th in Lisbon (UTC+0), already the 29th in Tokyo (UTC+9).
        let (lisbonDay, lisbonMinute) = LocalCalendar.dayAndMinute(of: Timestamp(milliseconds: 1_774_740_600_000), in: lisbon)
        #expect(lisbonDay == PromoWindow.Day(year: 2026, month: 3, day: 28) && lisbonMinute == 23 * 60 + 30)
        let (tokyoDay, tokyoMinute) = LocalCalendar.dayAndMinute(of: Timestamp(milliseconds: 1_774_740_600_000), in: tokyo)
        #expect(tokyoDay == PromoWindow.Day(year: 2026, month: 3, day: 29) && tokyoMinute == 8 * 60 + 30)
        // Lisbon goes from 00:59 to 02:00 at 01:00 UTC on 2026-03-29.
        #expect(LocalCalendar.dayAndMinute(of: Timestamp(milliseconds: 1_774_745_940_000), in: lisbon).1 == 59)
        #expect(LocalCalendar.dayAndMinute(of: Timestamp(milliseconds: 1_774_746_000_000), in: lisbon).1 == 120)
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
