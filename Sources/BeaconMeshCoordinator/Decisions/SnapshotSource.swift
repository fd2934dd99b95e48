import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Logging

/// What one store's presence snapshot is made from, taken by the decisions, so that the snapshot can be sorted, made
/// and encoded outside them. It holds copies of the present members' profiles, not the state's dictionary of all
/// profiles: sharing that would make the next visit count copy the whole dictionary. `present` may come in any order.
struct SnapshotSource: Sendable {
    let store: CoordinatorConfiguration.Store
    let present: [(visit: PresenceEngine.Visit, profile: MemberProfile)]
    let guests: [UInt16: Int]
    let nodes: [PresenceSnapshot.NodeState]
    let at: Timestamp
    /// For a surveyed store: its survey's status.
    var survey: SurveyStatus? = nil
    /// With leases: until when (monotonic) the store may be decided for; the snapshot is not published after.
    var decidingUntil: ContinuousClock.Instant? = nil

    /// How many bytes of member photos one snapshot carries at most.
    static let photoBudget = 128 * 1024

    /// The snapshot: present members newest arrival first, with how sure the engine is of each (a member whose
    /// department is unknown is listed with none and counted in no department), occupancy of every department
    /// (named), node states.
    func snapshot() -> PresenceSnapshot {
        var occupancy: [UInt16: PresenceSnapshot.Occupancy] = [:]
        for department in store.departments { occupancy[department.id] = .init(members: 0, guests: 0, name: department.name) }
        var members: [PresenceSnapshot.PresentMember] = []
        members.reserveCapacity(present.count)
        var photoBytes = 0
        for (visit, var profile) in present.sorted(by: { PresenceEngine.Visit.newestFirst($0.visit, $1.visit) }) {
            // Photos ride along while they fit the budget, newest arrivals first: a busy store's snapshot must stay
            // within what brokers and readers take (256 KiB); later members are shown by their initials.
            if let photo = profile.photo {
                photoBytes += photo.utf8.count
                if photoBytes > SnapshotSource.photoBudget { profile.photo = nil }
            }
            let department = visit.departmentUnknown ? nil : visit.department
            let departmentName = department.map { store.department($0)?.name ?? "Department \($0)" }
            members.append(
                .init(
                    member: profile, department: department, departmentName: departmentName,
                    proximity: visit.proximity, arrivedAt: visit.arrivedAt, inDepartmentSince: visit.inDepartmentSince,
                    lastSeen: visit.lastSeen, confidence: visit.confidence))
            if let department { occupancy[department, default: .init(members: 0, guests: 0)].members += 1 }
        }
        for (department, guests) in guests {
            occupancy[department, default: .init(members: 0, guests: 0)].guests += guests
        }
        var snapshot = PresenceSnapshot(
            store: store.id, name: store.name, updatedAt: at, members: members, occupancy: occupancy, nodes: nodes)
        snapshot.survey = survey
        return snapshot
    }
}
