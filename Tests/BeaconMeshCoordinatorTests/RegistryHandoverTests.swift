import BeaconMeshCore
import BeaconMeshRegistry
import Foundation
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

    @Test("member changes wait merged as one item, ahead of a tick")
    func inboxOrder() async {
        let inbox = DecisionInbox(capacity: 4)
        inbox.membersChanged(MemberChanges(records: [Self.record("ana")]))
        inbox.requestTick()
        inbox.membersChanged(MemberChanges(removed: ["ana"]))
        inbox.membersChanged(MemberChanges(records: [Self.record("ben")]))
        guard case .membersChanged(let changes)? = await inbox.next() else {
            Issue.record("the changes come first")
            return
        }
        #expect(changes.records.keys.sorted() == ["ben"] && changes.removed == ["ana"])
        guard case .tick? = await inbox.next() else {
            Issue.record("then the tick")
            return
        }
    }

    @Test("a whole read compared with the registry known: only members added, changed, given or giving up a beacon, or gone")
    func wholeReadDifference() {
        let ana = Self.record("ana", minor: 1)
        let ben = Self.record("ben", minor: 2)
        let cleo = Self.record("cleo", minor: 3)
        let dora = Self.record("dora", minor: 4)
        func contents(_ records: [MemberRecord], fires: [String: [String: Timestamp]] = [:]) -> RegistryContents {
            var owners: [BeaconKey: String] = [:]
            for record in records { for beacon in record.beacons { owners[beacon] = record.id } }
            return RegistryContents(
                profiles: Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0.profile) }), beaconOwners: owners, promoFires: fires)
        }
        let known = contents([ana, ben, cleo, dora])
        // Ana counted a visit elsewhere; Ben's beacon went to Cleo; Dora is gone; Eve joined; Cleo's promo fired.
        var anaLater = ana
        anaLater.profile.visits = 3
        var cleoLater = cleo
        cleoLater.beacons += ben.beacons
        let eve = Self.record("eve", minor: 5)
        var benLater = ben
        benLater.beacons = []
        let fired = ["cleo": ["coffee": Timestamp(milliseconds: 9)]]
        let read = contents([anaLater, benLater, cleoLater, eve], fires: fired)
        let changes = read.changes(since: known)
        #expect(changes.records.keys.sorted() == ["ana", "ben", "cleo", "eve"])
        #expect(changes.records["ben"]?.beacons == [])
        #expect(Set(changes.records["cleo"]?.beacons ?? []) == Set(cleoLater.beacons))
        #expect(changes.records["ana"]?.profile.visits == 3)
        #expect(changes.removed == ["dora"])
        #expect(changes.promoFires == fired)
        var applied = known
        applied.apply(changes)
        #expect(read.changes(since: applied).isEmpty, "taken in, the same read changes nothing")
        #expect(read.changes(since: read).isEmpty)
    }
}
