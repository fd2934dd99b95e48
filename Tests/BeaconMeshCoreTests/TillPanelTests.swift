import Foundation
import Testing

@testable import BeaconMeshCore

/// The till's "near the till" list, from snapshots.
@Suite("Till panel")
struct TillPanelTests {
    private static let start = Timestamp(milliseconds: 1_763_769_600_000)

    private static func snapshot(_ members: [(String, UInt16, Proximity, Int64)]) -> PresenceSnapshot {
        PresenceSnapshot(
            store: 9, name: "Cafe", updatedAt: start,
            members: members.map { id, department, proximity, seen in
                .init(
                    member: MemberProfile(id: id, name: id.capitalized), department: department, departmentName: "D\(department)",
                    proximity: proximity, arrivedAt: start, inDepartmentSince: start, lastSeen: start + .milliseconds(seen))
            }, occupancy: [:], nodes: [])
    }

    @Test("members immediate or near at the till are numbered 1–9 in order of coming; far ones and other departments are not")
    func numbering() {
        var panel = TillPanel(department: 6)
        panel.apply(Self.snapshot([("zoe", 6, .immediate, 0), ("ana", 6, .far, 0), ("li", 7, .near, 0)]), at: Self.start)
        panel.apply(Self.snapshot([("zoe", 6, .immediate, 100), ("kim", 6, .near, 100)]), at: Self.start + .milliseconds(100))
        #expect(panel.entries.map { "\($0.number) \($0.member.id)" } == ["1 zoe", "2 kim"])
        #expect(panel.member(numbered: 2)?.id == "kim")
        #expect(panel.member(numbered: 3) == nil)
    }

    @Test("a member not heard near the till for 5 s is dropped; one heard again stays; numbers are kept and reused")
    func pruning() {
        var panel = TillPanel(department: 6)
        panel.apply(Self.snapshot([("zoe", 6, .near, 0), ("kim", 6, .near, 0)]), at: Self.start)
        // Zoë keeps being heard; Kim's last reading stays what it was.
        for step in 1...6 {
            panel.apply(
                Self.snapshot([("zoe", 6, .near, Int64(step) * 1000), ("kim", 6, .near, 0)]), at: Self.start + .seconds(Int64(step)))
        }
        #expect(panel.entries.map { "\($0.number) \($0.member.id)" } == ["1 zoe"])
        panel.apply(Self.snapshot([("zoe", 6, .near, 7000), ("li", 6, .immediate, 7000)]), at: Self.start + .seconds(7))
        #expect(panel.entries.map { "\($0.number) \($0.member.id)" } == ["1 zoe", "2 li"])
        panel.prune(at: Self.start + .seconds(13))
        #expect(panel.entries.isEmpty)
    }
}
