import BeaconMeshCore
import BeaconMeshWire
import Testing

@testable import BeaconMeshCoordinator

/// A busy store's snapshot, photos and all, must stay readable: brokers and readers take at most 256 KiB.
@Suite("Coordinator snapshot size")
struct SnapshotSizeTests {
    @Test("200 members with 4.4 KB photos make a snapshot under 256 KiB; the newest arrivals keep their photos")
    func photosWithinBudget() throws {
        var store = CoordinatorConfiguration.Store(id: 1, name: "San Francisco")
        store.departments = [.init(id: 10, name: "Clothing", presence: PresenceRules())]
        let photo = "data:image/jpeg;base64," + String(repeating: "A", count: 4_400)
        let start = Timestamp(milliseconds: 1_763_769_600_000)
        let present = (0..<200).map { index in
            let visit = PresenceEngine.Visit(
                member: "m\(index)", store: 1, arrivedAt: start - .seconds(Int64(index)), department: 10,
                inDepartmentSince: start, lastSeen: start, leftAt: nil, proximity: .near)
            return (visit: visit, profile: MemberProfile(id: "m\(index)", name: "Member \(index)", photo: photo))
        }
        let snapshot = SnapshotSource(store: store, present: present, guests: [:], nodes: [], at: start).snapshot()
        let bytes = WireCodec.encode(snapshot)
        #expect(bytes.count < WireCodec.maximumPayloadBytes, "\(bytes.count) bytes")
        let decoded = try WireCodec.decodePresenceSnapshot(bytes)
        #expect(decoded.members.count == 200)
        #expect(decoded.members.first?.member.photo == photo, "the newest arrival keeps the photo")
        #expect(decoded.members.last?.member.photo == nil)
    }
}
