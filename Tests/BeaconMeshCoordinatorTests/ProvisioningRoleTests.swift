import BeaconMeshCoordinator
import BeaconMeshCore
import Testing

@Suite("provisioning: user names and ACL lines")
struct ProvisioningRoleTests {
    @Test("user names follow the scheme: node-<store>-<dept>-<node>, monitor-<store>, coordinator-<id>, member id")
    func userNames() {
        #expect(ProvisioningRole.node(NodeAddress(store: 1, department: 10, node: "a")!).username == "node-1-10-a")
        #expect(ProvisioningRole.node(NodeAddress(store: 65535, department: 0, node: "till-2")!).username == "node-65535-0-till-2")
        #expect(ProvisioningRole.monitor(store: 1).username == "monitor-1")
        #expect(ProvisioningRole.till(store: 9).username == "till-9")
        #expect(ProvisioningRole.coordinator(id: "backoffice-1", stores: [1]).username == "coordinator-backoffice-1")
        #expect(ProvisioningRole.member(id: "ana").username == "ana")
    }

    @Test("a scanner may write only its own node's sightings, status and health, and read only its store's and its own node config")
    func nodeLines() {
        let role = ProvisioningRole.node(NodeAddress(store: 1, department: 10, node: "a")!)
        #expect(
            role.topicLines() == [
                "topic write beaconmesh/v1/stores/1/departments/10/nodes/a/sightings",
                "topic write beaconmesh/v1/stores/1/departments/10/nodes/a/status",
                "topic write beaconmesh/v1/stores/1/departments/10/nodes/a/health",
                "topic read beaconmesh/v1/stores/1/nodes/config",
                "topic read beaconmesh/v1/stores/1/departments/10/nodes/a/config",
            ])
        #expect(role.topicLines(topicRoot: "acme").allSatisfy { $0.contains(" acme/v1/stores/1/") })
    }

    @Test("the fleet credential is the only one that writes node configs; it reads them and every node's status and health")
    func fleetLines() {
        let fleet = ProvisioningRole.fleet(name: "hq")
        #expect(fleet.username == "fleet-hq")
        #expect(
            fleet.topicLines() == [
                "topic readwrite beaconmesh/v1/stores/+/nodes/config",
                "topic readwrite beaconmesh/v1/stores/+/departments/+/nodes/+/config",
                "topic read beaconmesh/v1/stores/+/departments/+/nodes/+/status",
                "topic read beaconmesh/v1/stores/+/departments/+/nodes/+/health",
            ])
        #expect(ProvisioningRole.fleet(name: "a b").problem != nil)
        #expect(ProvisioningRole.member(id: "fleet-hq").problem?.contains("kept for service user names") == true)
        // Nobody else may write a node config: no other role has a write (or readwrite) line that reaches one.
        let others: [ProvisioningRole] = [
            .node(NodeAddress(store: 1, department: 10, node: "a")!), .monitor(store: 1), .till(store: 1),
            .coordinator(id: "bo", stores: [1]), .coordinator(id: "hq", stores: []), .dashboard(id: "hq", stores: []),
        ]
        for role in others {
            let writes = role.topicLines().filter { !$0.hasPrefix("topic read ") }
            #expect(!writes.contains { $0.hasSuffix("/config") || $0.hasSuffix("/#") || $0.contains("/departments/#") }, "\(role)")
        }
    }

    @Test(
        "a dashboard reads what it shows — presence, events, node status and health, alerts, sightings (the survey page), coordinators' status and health — of its stores or all, and writes only their survey marks"
    )
    func dashboardLines() {
        #expect(ProvisioningRole.dashboard(id: "hq", stores: []).username == "dashboard-hq")
        #expect(
            ProvisioningRole.dashboard(id: "hq", stores: []).topicLines() == [
                "topic read beaconmesh/v1/stores/+/presence", "topic read beaconmesh/v1/stores/+/events",
                "topic read beaconmesh/v1/stores/+/departments/+/nodes/+/status",
                "topic read beaconmesh/v1/stores/+/departments/+/nodes/+/health", "topic read beaconmesh/v1/stores/+/alerts",
                "topic read beaconmesh/v1/stores/+/departments/+/nodes/+/sightings",
                "topic write beaconmesh/v1/stores/+/survey",
                "topic read beaconmesh/v1/coordinators/+/status", "topic read beaconmesh/v1/coordinators/+/health",
            ])
        let two = ProvisioningRole.dashboard(id: "region-west", stores: [2, 1, 2]).topicLines()
        #expect(
            two.count == 16 && two.filter { $0.contains("/stores/1/") }.count == 7 && two.filter { $0.contains("/stores/2/") }.count == 7)
        #expect(
            two.filter { !$0.hasPrefix("topic read ") } == [
                "topic write beaconmesh/v1/stores/1/survey", "topic write beaconmesh/v1/stores/2/survey",
            ])
        #expect(ProvisioningRole.dashboard(id: "bad/id", stores: []).problem != nil)
        #expect(ProvisioningRole.member(id: "dashboard-hq").problem?.contains("kept for service user names") == true)
    }

    @Test("a monitor reads its store and writes nothing")
    func monitorLines() {
        #expect(ProvisioningRole.monitor(store: 7).topicLines() == ["topic read beaconmesh/v1/stores/7/#"])
    }

    @Test("a till reads its store like a monitor and writes only that store's check-in requests")
    func tillLines() {
        #expect(
            ProvisioningRole.till(store: 9).topicLines() == [
                "topic read beaconmesh/v1/stores/9/#", "topic write beaconmesh/v1/stores/9/checkins",
            ])
        #expect(ProvisioningRole.till(store: 9).kind == "till")
    }

    @Test(
        "a coordinator reads its stores' node topics, ranging and check-in requests, survey marks and writes events, presence, alerts, offers, check-ins, registry events and its own status"
    )
    func coordinatorLines() {
        let lines = ProvisioningRole.coordinator(id: "bo", stores: [2, 1]).topicLines()
        #expect(
            lines == [
                "topic read beaconmesh/v1/stores/1/departments/#",
                "topic read beaconmesh/v1/stores/1/members/+/ranging",
                "topic read beaconmesh/v1/stores/1/checkins",
                "topic read beaconmesh/v1/stores/1/survey",
                "topic write beaconmesh/v1/stores/1/events",
                "topic write beaconmesh/v1/stores/1/presence",
                "topic write beaconmesh/v1/stores/1/alerts",
                "topic read beaconmesh/v1/stores/2/departments/#",
                "topic read beaconmesh/v1/stores/2/members/+/ranging",
                "topic read beaconmesh/v1/stores/2/checkins",
                "topic read beaconmesh/v1/stores/2/survey",
                "topic write beaconmesh/v1/stores/2/events",
                "topic write beaconmesh/v1/stores/2/presence",
                "topic write beaconmesh/v1/stores/2/alerts",
                "topic write beaconmesh/v1/members/+/offers",
                "topic write beaconmesh/v1/members/+/checkins",
                "topic write beaconmesh/v1/registry/events",
                "topic readwrite beaconmesh/v1/coordinators/bo/status",
                "topic write beaconmesh/v1/coordinators/bo/health",
            ])
        let everyStore = ProvisioningRole.coordinator(id: "hq", stores: []).topicLines()
        #expect(everyStore.first == "topic read beaconmesh/v1/stores/+/departments/#")
    }

    @Test(
        "a store's bridge writes that store's tree at head office but its node configs, which it reads, and reads members' offers and check-ins back"
    )
    func bridgeLines() {
        let role = ProvisioningRole.bridge(store: 3)
        #expect(role.username == "bridge-store-3")
        #expect(
            role.topicLines() == [
                "topic write beaconmesh/v1/stores/3/departments/+/nodes/+/sightings",
                "topic write beaconmesh/v1/stores/3/departments/+/nodes/+/status",
                "topic write beaconmesh/v1/stores/3/departments/+/nodes/+/health", "topic write beaconmesh/v1/stores/3/events",
                "topic write beaconmesh/v1/stores/3/presence", "topic write beaconmesh/v1/stores/3/alerts",
                "topic write beaconmesh/v1/stores/3/members/+/ranging", "topic write beaconmesh/v1/stores/3/checkins",
                "topic write beaconmesh/v1/stores/3/survey", "topic read beaconmesh/v1/stores/3/nodes/config",
                "topic read beaconmesh/v1/stores/3/departments/+/nodes/+/config", "topic read beaconmesh/v1/members/+/offers",
                "topic read beaconmesh/v1/members/+/checkins",
            ])
        #expect(!role.topicLines().contains { $0.hasPrefix("topic write") && $0.hasSuffix("config") })
    }

    @Test("a member has no block of its own: the shared %u patterns give it its ranging reports, offers and check-ins, nothing else")
    func memberLines() {
        #expect(ProvisioningRole.member(id: "ana").topicLines().isEmpty)
        #expect(
            ProvisioningACL.patternLines().filter { !$0.hasPrefix("#") } == [
                "pattern write beaconmesh/v1/stores/+/members/%u/ranging",
                "pattern read beaconmesh/v1/members/%u/offers",
                "pattern read beaconmesh/v1/members/%u/checkins",
            ])
        #expect(ProvisioningACL.patternLines(topicRoot: "acme").filter { !$0.hasPrefix("#") }.allSatisfy { $0.contains(" acme/v1/") })
    }

    @Test("member ids that are not topic-safe or look like service names are refused, with the reason")
    func badIDs() {
        #expect(ProvisioningRole.member(id: "ana").problem == nil)
        #expect(ProvisioningRole.member(id: "ana.souza_2-x").problem == nil)
        for id in ["", "a/b", "a+b", "#", "ana souza", "ana:1", String(repeating: "x", count: 65)] {
            #expect(ProvisioningRole.member(id: id).problem != nil, "\(id)")
        }
        #expect(ProvisioningRole.member(id: "node-1-10-a").problem?.contains("kept for service user names") == true)
        #expect(ProvisioningRole.member(id: "coordinator-x").problem != nil)
        #expect(
            ProvisioningRole.member(id: "till-9").problem?.contains("kept for service user names") == true,
            "a member named like a till would get the till's own-name pattern topics")
        #expect(ProvisioningRole.coordinator(id: "back/office", stores: []).problem != nil)
    }

    @Test("passwords are 32 letters and digits and differ each time")
    func passwords() {
        let first = ProvisioningPassword.make()
        let second = ProvisioningPassword.make()
        #expect(first.count == 32)
        #expect(first.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        #expect(first != second)
    }
}
