import BeaconMeshCore

@testable import BeaconMeshMonitor

/// Members, snapshots and events of a small test store (store 1, "San Francisco"), at times relative to `t0`.
enum StoreFixtures {
    static let t0 = Timestamp(milliseconds: 1_763_769_600_000)

    static func at(seconds: Double) -> Timestamp {
        Timestamp(milliseconds: t0.milliseconds + Int64(seconds * 1000))
    }

    static let ana = MemberProfile(id: "ana", name: "Ana Souza", favoriteDrink: "Flat white", visits: 12)
    static let jose = MemberProfile(id: "jose", name: "José Álvarez", favoriteDrink: "Cortado", visits: 3)
    static let zoe = MemberProfile(id: "zoe", name: "Zoë Martin", favoriteDrink: nil, visits: 1)
    static let li = MemberProfile(id: "li", name: "李雷", favoriteDrink: "茉莉花茶", visits: 25)

    static let departments: [UInt16: String] = [10: "Clothing", 20: "Housewares", 30: "Automotive"]

    /// `member` present in `department` (`nil`: in the store, department unknown), held with `confidence`.
    static func present(
        _ member: MemberProfile, in department: UInt16? = 10, proximity: Proximity = .near, arrivedAt: Timestamp,
        confidence: Double? = nil
    ) -> PresenceSnapshot.PresentMember {
        .init(
            member: member, department: department, departmentName: department.map { departments[$0] ?? "Dept \($0)" },
            proximity: proximity, arrivedAt: arrivedAt, inDepartmentSince: arrivedAt, lastSeen: arrivedAt,
            confidence: confidence)
    }

    static func snapshot(
        _ members: [PresenceSnapshot.PresentMember], at time: Timestamp, store: UInt16 = 1,
        guests: Int = 0, nodes: [PresenceSnapshot.NodeState] = []
    ) -> PresenceSnapshot {
        var occupancy: [UInt16: PresenceSnapshot.Occupancy] = [:]
        for present in members {
            if let department = present.department { occupancy[department, default: .init(members: 0, guests: 0)].members += 1 }
        }
        if guests > 0 { occupancy[10, default: .init(members: 0, guests: 0)].guests += guests }
        return PresenceSnapshot(
            store: store, name: "San Francisco", updatedAt: time, members: members,
            occupancy: occupancy, nodes: nodes)
    }

    static func event(_ id: String, at time: Timestamp, _ kind: StoreEvent.Kind, store: UInt16 = 1) -> StoreEvent {
        StoreEvent(id: id, store: store, at: time, kind: kind)
    }

    static func arrived(_ member: MemberProfile, id: String, at time: Timestamp) -> StoreEvent {
        event(
            id, at: time,
            .arrived(
                member: member, department: 10, departmentName: "Clothing",
                visit: VisitNumber(number: member.visits, previousAt: nil), greeting: "Hello", evidence: nil))
    }

    static func promo(_ member: MemberProfile, title: String, id: String, at time: Timestamp) -> StoreEvent {
        event(
            id, at: time,
            .promo(
                member: member, department: 10, departmentName: "Clothing",
                promo: Promo(id: "shirts", title: title, message: "Ganhe R$10!")))
    }

    /// A connected model holding Ana (arrived at 0 s), José (60 s) and 李雷 (120 s), seen at 130 s.
    static func threeMembers() -> MonitorModel {
        var model = MonitorModel(store: 1, broker: "mqtt://127.0.0.1:1883")
        model.connection(changed: true, at: t0)
        model.apply(
            snapshot: snapshot(
                [
                    present(ana, in: 10, arrivedAt: at(seconds: 0)),
                    present(li, in: 30, proximity: .far, arrivedAt: at(seconds: 120)),
                    present(jose, in: 20, proximity: .immediate, arrivedAt: at(seconds: 60)),
                ], at: at(seconds: 130), guests: 3,
                nodes: [
                    .init(department: 10, node: "a", state: .online), .init(department: 30, node: "a", state: .offline),
                ]), at: at(seconds: 130))
        return model
    }
}
