import BeaconMeshCore
import BeaconMeshCoordinator
import Testing

@Suite("provisioning: user names and ACL lines")
struct ProvisioningRoleTests {
    @Test("user names follow the scheme: node-<store>-<dept>-<node>, monitor-<store>, coordinator-<id>, member id")
    func userNames() {
        #expect(ProvisioningRole.node(NodeAddress(store: 1, department: 10, node: "a")!).username == "node-1-10-a")
        #expect(ProvisioningRole.node(NodeAddress(store: 65535, department: 0, node: "till-2")!).username == "node-65535-0-till-2")
        #expect(ProvisioningRole.monitor(store: 1).username == "monitor-1")
        #expect(ProvisioningRole.coordinator(id: "backoffice-1", stores: [1]).username == "coordinator-backoffice-1")
        #expect(ProvisioningRole.member(id: "ana").username == "ana")
    }

    @Test("a scanner may write only its own node's sightings, status and health")
    func nodeLines() {
        let role = ProvisioningRole.node(NodeAddress(store: 1, department: 10, node: "a")!)
        #expect(role.topicLines() == [
            "topic write beaconmesh/v1/stores/1/departments/10/nodes/a/sightings",
            "topic write beaconmesh/v1/stores/1/departments/10/nodes/a/status",
            "topic write beaconmesh/v1/stores/1/departments/10/nodes/a/health",
        ])
        #expect(role.topicLines(topicRoot: "acme").allSatisfy { $0.hasPrefix("topic write acme/v1/stores/1/") })
    }

    @Test("a monitor reads its store and writes nothing")
    func monitorLines() {
        #expect(ProvisioningRole.monitor(store: 7).topicLines() == ["topic read beaconmesh/v1/stores/7/#"])
    }

    @Test("a coordinator reads its stores' node topics and writes events, presence, offers and its own status")
    func coordinatorLines() {
        let lines = ProvisioningRole.coordinator(id: "bo", stores: [2, 1]).topicLines()
        #expect(lines == [
            "topic read beaconmesh/v1/stores/1/departments/#",
            "topic write beaconmesh/v1/stores/1/events",
            "topic write beaconmesh/v1/stores/1/presence",
            "topic read beaconmesh/v1/stores/2/departments/#",
            "topic write beaconmesh/v1/stores/2/events",
            "topic write beaconmesh/v1/stores/2/presence",
            "topic write beaconmesh/v1/members/+/offers",
            "topic readwrite beaconmesh/v1/coordinators/bo/status",
            "topic write beaconmesh/v1/coordinators/bo/health",
        ])
        let everyStore = ProvisioningRole.coordinator(id: "hq", stores: []).topicLines()
        #expect(everyStore.first == "topic read beaconmesh/v1/stores/+/departments/#")
    }

    @Test("a store's bridge writes that store's tree at head office and reads members' offers back")
    func bridgeLines() {
        let role = ProvisioningRole.bridge(store: 3)
        #expect(role.username == "bridge-store-3")
        #expect(role.topicLines() == ["topic write beaconmesh/v1/stores/3/#", "topic read beaconmesh/v1/members/+/offers"])
    }

    @Test("a member has no block of its own: the shared %u pattern gives it its offers")
    func memberLines() {
        #expect(ProvisioningRole.member(id: "ana").topicLines().isEmpty)
        #expect(ProvisioningACL.patternLines().contains("pattern read beaconmesh/v1/members/%u/offers"))
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
        #expect(ProvisioningRole.coordinator(id: "back/office", stores: []).problem != nil)
    }

    @Test("passwords are 32 letters and digits and differ each time")
    func passwords() {
        let first = ProvisioningPassword.make(), second = ProvisioningPassword.make()
        #expect(first.count == 32)
        #expect(first.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        #expect(first != second)
    }
}
