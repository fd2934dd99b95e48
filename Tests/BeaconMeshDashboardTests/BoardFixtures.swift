import BeaconMeshCore
import BeaconMeshWire

/// Payloads as the coordinator publishes them, for the dashboard's boards.
enum BoardFixtures {
    static let topics = Topics()
    static let photo = "data:image/jpeg;base64,/9j/4AAQSkZJRg=="

    static func at(seconds: Int64) -> Timestamp { Timestamp(milliseconds: 1_763_769_600_000 + seconds * 1000) }

    static func member(_ id: String, _ name: String, photo: String? = nil, visits: Int = 1) -> MemberProfile {
        MemberProfile(id: id, name: name, favoriteDrink: id == "ana" ? "Flat white" : nil, visits: visits, photo: photo)
    }

    /// A snapshot of `members` (profile, department or `nil` for unknown, arrival second), each held with
    /// `confidence`.
    static func snapshot(
        store: UInt16 = 1, members: [(MemberProfile, UInt16?, Int64)], guests: Int = 0,
        nodes: [PresenceSnapshot.NodeState] = [], confidence: Double? = nil, at seconds: Int64
    ) -> [UInt8] {
        let present = members.map { profile, department, arrived in
            PresenceSnapshot.PresentMember(
                member: profile, department: department,
                departmentName: department.map { $0 == 10 ? "Clothing" : "Housewares" },
                proximity: .near, arrivedAt: at(seconds: arrived), inDepartmentSince: at(seconds: arrived),
                lastSeen: at(seconds: seconds), confidence: confidence)
        }
        var occupancy: [UInt16: PresenceSnapshot.Occupancy] = [
            10: .init(members: 0, guests: guests, name: "Clothing"),
            20: .init(members: 0, guests: 0, name: "Housewares"),
        ]
        for member in present { if let department = member.department { occupancy[department]?.members += 1 } }
        return WireCodec.encode(
            PresenceSnapshot(
                store: store, name: "San Francisco", updatedAt: at(seconds: seconds),
                members: present, occupancy: occupancy, nodes: nodes))
    }

    static func event(_ id: String, store: UInt16 = 1, _ kind: StoreEvent.Kind, at seconds: Int64) -> [UInt8] {
        WireCodec.encode(StoreEvent(id: id, store: store, at: at(seconds: seconds), kind: kind))
    }
}
