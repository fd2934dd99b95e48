import BeaconMeshCore
import BeaconMeshRegistry
import Testing

@testable import BeaconMeshCoordinator

/// `members list`'s table: a member's Eddystone-EID fob is a column of its own, not one of her beacons.
@Suite("The members table")
struct MemberTableTests {
    static let uuid = BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e")!

    static func member(_ id: String, beacons: [BeaconKey], fob: MemberFob? = nil) -> MemberRecord {
        MemberRecord(profile: MemberProfile(id: id, name: "Member \(id)"), beacons: beacons, createdAt: nil, fob: fob)
    }

    @Test("a fob shows as FOB with its K, never counted among the beacons; without fobs the table has no FOB column")
    func fobColumn() {
        let fob = MemberFob(sealedKey: Array(repeating: 7, count: 44), rotationExponent: 10, offset: 0, handle: 0xF0B)
        let ana = Self.member("ana", beacons: [.iBeacon(uuid: Self.uuid, major: 1, minor: 1), fob.key], fob: fob)
        let ben = Self.member("ben", beacons: [.iBeacon(uuid: Self.uuid, major: 1, minor: 2)])
        let lines = MemberTable.render([ana, ben]).split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(lines[0].suffix(2) == ["BEACONS", "FOB"])
        #expect(lines[1].suffix(3) == ["1", "eid", "K=10"], "\(lines[1])")
        #expect(lines[2].suffix(2) == ["1", "-"], "\(lines[2])")
        #expect(!MemberTable.render([ben]).contains("FOB"))
    }
}
