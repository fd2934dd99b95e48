import BeaconMeshCore
import BeaconMeshRegistry
import Testing

@testable import BeaconMeshCoordinator

/// How the registry's changes reach the decisions: a whole read, or the members announced, coalesced while waiting.
@Suite("Registry changes handed to the decisions")
struct RegistryHandoverTests {
    static func record(_ id: String, visits: Int = 0, minor: UInt16 = 1) -> MemberRecord {
        MemberRecord(
            profile: MemberProfile(id: id, name: id.capitalized, visits: visits),
            beacons: [.iBeacon(uuid: CoordinatorDecisionTests.uuid, major: 1, minor: minor)], createdAt: nil)
    }

    @Test("later member changes merge over earlier ones: changed then removed is removed, removed then added is there")
    func changesMerge() {
        var changes = MemberChanges(records: [Self.record("ana", visits: 1), Self.record("ben")], removed: ["cleo"])
        changes.merge(MemberChanges(records: [Self.record("cleo"), Self.record("ana", visits: 2)], removed: ["ben"]))
        #expect(changes.records.keys.sorted() == ["ana", "cleo"])
        #expect(changes.records["ana"]?.profile.visits == 2)
        #expect(changes.removed == ["ben"])
    }

    @Test("member changes wait as one item after a whole read; a whole read drops the changes read before it")
    func inboxOrder() async {
        let inbox = DecisionInbox(capacity: 4)
        inbox.membersChanged(MemberChanges(records: [Self.record("ana")]))
        inbox.membersChanged(MemberChanges(removed: ["ana"]))
        inbox.registryChanged(RegistryContents(profiles: [:], beaconOwners: [:], promoFires: [:]))
        inbox.membersChanged(MemberChanges(records: [Self.record("ben")]))
        inbox.membersChanged(MemberChanges(records: [Self.record("cleo")]))
        inbox.requestTick()
        guard case .registryChanged(let contents)? = await inbox.next() else {
            Issue.record("the whole read comes first")
            return
        }
        #expect(contents.profiles.isEmpty)
        guard case .membersChanged(let changes)? = await inbox.next() else {
            Issue.record("then the changes read after it")
            return
        }
        #expect(changes.records.keys.sorted() == ["ben", "cleo"] && changes.removed.isEmpty)
        guard case .tick? = await inbox.next() else {
            Issue.record("then the tick")
            return
        }
    }
}
