import Testing

@testable import BeaconMeshCore

@Suite("Topics")
struct TopicsTests {
    private let topics = Topics()
    private let node = NodeAddress(store: 12, department: 30, node: "entrance-2")!

    @Test("every topic the tree builds is recognised as what it is")
    func roundTrip() {
        #expect(topics.parse(topics.sightings(node)) == .sightings(node))
        #expect(topics.parse(topics.nodeStatus(node)) == .nodeStatus(node))
        #expect(topics.parse(topics.nodeHealth(node)) == .nodeHealth(node))
        #expect(topics.parse(topics.events(store: 65535)) == .events(store: 65535))
        #expect(topics.parse(topics.presence(store: 0)) == .presence(store: 0))
        #expect(topics.parse(topics.offers(member: "m-17")) == .offers(member: "m-17"))
        #expect(topics.parse(topics.coordinatorStatus(id: "hq")) == .coordinatorStatus(id: "hq"))
        #expect(topics.parse(topics.coordinatorHealth(id: "hq")) == .coordinatorHealth(id: "hq"))
        #expect(topics.parse(topics.survey(store: 12)) == .survey(store: 12))
    }

    @Test("a store's survey marks have the contract's topic, one level under the store, beside its check-ins")
    func survey() {
        #expect(topics.survey(store: 1) == "beaconmesh/v1/stores/1/survey")
        #expect(topics.surveyFilter(store: nil) == "beaconmesh/v1/stores/+/survey")
        #expect(topics.surveyFilter(store: 9) == topics.survey(store: 9))
        #expect(topics.parse("beaconmesh/v1/stores/65535/survey") == .survey(store: 65535))
        #expect(Topics(root: "acme").parse(Topics(root: "acme").survey(store: 3)) == .survey(store: 3))
    }

    @Test("subscription filters and ACL topics: a missing level is `+`, the bytes the contract names")
    func filters() {
        #expect(topics.eventsFilter(store: nil) == "beaconmesh/v1/stores/+/events")
        #expect(topics.eventsFilter(store: 1) == topics.events(store: 1))
        #expect(topics.presenceFilter(store: 7) == "beaconmesh/v1/stores/7/presence")
        #expect(topics.checkinsFilter(store: nil) == "beaconmesh/v1/stores/+/checkins")
        #expect(topics.nodeStatusFilter(store: nil) == "beaconmesh/v1/stores/+/departments/+/nodes/+/status")
        #expect(topics.sightingsFilter(store: nil) == "beaconmesh/v1/stores/+/departments/+/nodes/+/sightings")
        #expect(topics.departmentsFilter(store: 3) == "beaconmesh/v1/stores/3/departments/#")
        #expect(topics.rangingFilter(store: nil, member: "%u") == "beaconmesh/v1/stores/+/members/%u/ranging")
        #expect(topics.rangingFilter(store: 2, member: nil) == topics.allRanging(store: 2))
        #expect(topics.offersFilter(member: nil) == "beaconmesh/v1/members/+/offers")
        #expect(topics.checkinsFilter(member: nil) == "beaconmesh/v1/members/+/checkins")
        #expect(topics.coordinatorStatusFilter(id: nil) == "beaconmesh/v1/coordinators/+/status")
        #expect(topics.coordinatorHealthFilter(id: "hq") == topics.coordinatorHealth(id: "hq"))
    }

    @Test("a configured root replaces the first level, and only that tree is recognised")
    func configuredRoot() {
        let chain = Topics(root: "acme/retail")
        #expect(chain.parse(chain.sightings(node)) == .sightings(node))
        #expect(chain.parse(topics.sightings(node)) == nil)
        #expect(topics.parse(chain.sightings(node)) == nil)
    }

    @Test(
        "anything else is not a topic of the contract",
        arguments: [
            "", "beaconmesh", "beaconmesh/v1", "beaconmesh/v1/", "beaconmesh/v2/stores/1/events", "beaconmesh/v1x/stores/1/events",
            "beaconmeshy/v1/stores/1/events", "beaconmesh/v1/stores/1/events/", "beaconmesh/v1/stores//events",
            "beaconmesh/v1/stores/65536/events", "beaconmesh/v1/stores/-1/events", "beaconmesh/v1/stores/+1/events",
            "beaconmesh/v1/stores/1x/events", "beaconmesh/v1/stores/1/offers", "beaconmesh/v1/members//offers",
            "beaconmesh/v1/coordinators//status", "beaconmesh/v1/coordinators/hq/mood",
            "beaconmesh/v1/stores/1/departments/10/nodes/a/sighting", "beaconmesh/v1/stores/1/departments/10/nodes/A/sightings",
            "beaconmesh/v1/stores/1/departments/10/nodes//sightings", "beaconmesh/v1/stores/1/departments/100000/nodes/a/status",
            "beaconmesh/v1/stores/1/aisles/10/nodes/a/status", "beaconmesh/v1/stores/1/departments/10/nodes/a/status/x/y/z",
            "beaconmesh/v1/stores/1/surveys", "beaconmesh/v1/stores/1/survey/", "beaconmesh/v1/stores/1/survey/marks",
            "beaconmesh/v1/stores/70000/survey", "beaconmesh/v1/stores//survey", "beaconmesh/v1/members/1/survey",
        ])
    func refused(topic: String) {
        #expect(topics.parse(topic) == nil)
    }
}
