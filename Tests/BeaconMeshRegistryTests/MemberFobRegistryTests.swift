import BeaconMeshCore
import Foundation
import Testing

@testable import BeaconMeshRegistry

/// Members' Eddystone-EID fobs in the registry, on both backends: sealed keys kept as given, the handle among her
/// beacons for the coordinator, never exported.
@Suite("Member fobs in the registry, on SQLite and on PostgreSQL")
struct MemberFobRegistryTests {
    static let fob = MemberFob(sealedKey: Array(0..<44), rotationExponent: 10, offset: 1_700_000_000, handle: 0xF0B0_1234_5678_9ABC)
    static let beacon = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:1")!

    @Test(
        "a fob comes back as stored, its handle among her beacons; a record without one keeps it; export lists neither; forget erases it",
        arguments: Backend.allCases)
    func fobRoundTrip(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        let ana = MemberRecord(profile: MemberProfile(id: "ana", name: "Ana Souza"), beacons: [Self.beacon], createdAt: nil, fob: Self.fob)
        try registry.merge([ana, MemberRecord(profile: MemberProfile(id: "zoe", name: "Zoë"), beacons: [], createdAt: nil)])
        let stored = try #require(try registry.member(id: "ana"))
        #expect(stored.fob == Self.fob)
        #expect(Set(stored.beacons) == [Self.beacon, Self.fob.key] && stored.listedBeacons == [Self.beacon])
        #expect(try registry.member(id: "zoe")?.fob == nil)
        #expect(try registry.contents().fobs == ["ana": Self.fob] && registry.contents().beaconOwners[Self.fob.key] == "ana")

        // A CSV row of hers (no fob, other beacons): the fob stays hers.
        let other = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:2")!
        try registry.merge([MemberRecord(profile: MemberProfile(id: "ana", name: "Ana S."), beacons: [other], createdAt: nil)])
        let merged = try #require(try registry.member(id: "ana"))
        #expect(merged.fob == Self.fob && Set(merged.beacons) == [other, Self.fob.key])
        // A new fob replaces the old one and its handle.
        var newer = Self.fob
        newer.handle = 42
        try registry.merge([MemberRecord(profile: merged.profile, beacons: [other], createdAt: nil, fob: newer)])
        #expect(Set(try #require(try registry.member(id: "ana")).beacons) == [other, newer.key])

        let path = NSTemporaryDirectory() + "members-\(UUID().uuidString).csv"
        try MembersCSV.write(try registry.allMembers(), to: path)
        let exported = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!exported.contains("eddystone-eid") && !exported.contains(",eid"), "\(exported)")

        #expect(try registry.forget(id: "ana"))
        #expect(try registry.contents().fobs.isEmpty && registry.member(id: "ana") == nil)
    }

    @Test("a fob's offset as the coordinator followed it is written by its handle; a later one replaces it", arguments: Backend.allCases)
    func followedOffset(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        let ana = MemberRecord(profile: MemberProfile(id: "ana", name: "Ana Souza"), beacons: [], createdAt: nil, fob: Self.fob)
        try registry.merge([ana])
        var changes = RegistryChanges()
        changes.keepFobOffset(Self.fob.offset - 90, handle: Self.fob.handle)
        changes.keepFobOffset(5, handle: 0x5EED)  // a fob nobody has now: nothing written
        var later = RegistryChanges()
        later.keepFobOffset(Self.fob.offset - 150, handle: Self.fob.handle)
        changes.merge(later)
        #expect(changes.count == 2)
        try registry.apply(changes)
        var expected = Self.fob
        expected.offset -= 150
        #expect(try registry.member(id: "ana")?.fob == expected)
        #expect(try registry.contents().fobs == ["ana": expected])
    }

    @Test("the CSV's eid column is read for sealing, never kept as a custom field; a bad cell names its line, not the key")
    func csvColumn() throws {
        let header = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt,eid,tier"
        let key = "0102030405060708090a111213141516"
        let file = try MembersCSV.parseFile("\(header)\nana,Ana,,,,0,,,\(key):4:1700000000,gold\nzoe,Zoë,,,,0,,,,", file: "m.csv")
        #expect(file.records.map(\.profile.customFields) == [["tier": "gold"], [:]])
        #expect(file.fobs["ana"]?.rotationExponent == 4 && file.fobs["ana"]?.offset == 1_700_000_000 && file.fobs["zoe"] == nil)
        do {
            _ = try MembersCSV.parseFile("\(header)\nana,Ana,,,,0,,,\(key):99,gold", file: "m.csv")
            Issue.record("a K of 99 was read")
        } catch {
            #expect(error.description.hasPrefix("m.csv:2: member 'ana': eid must be 32 hex digits"))
            #expect(!error.description.contains(key))
        }
    }
}
