extension PresenceEngine {
    /// What the engine's member indexes hold of one member, to update them when the member changes.
    struct MemberMarks: Equatable, Sendable {
        var tracked: Bool
        /// The store the member is in now.
        var presentIn: UInt16?
        /// The visit that ended, for its expiry: its store, department and end.
        var left: LeftVisit?

        struct LeftVisit: Equatable, Sendable {
            var store: UInt16
            var department: UInt16
            var leftAt: Int64
        }
    }

    func marks(of number: Int32) -> MemberMarks {
        // Field by field: copying the whole person (its readings, its visit's member id) twice per evaluation showed
        // in the engine's profile.
        let index = Int(number)
        guard let store = members[index].visit?.store else {
            return MemberMarks(tracked: !members[index].readings.isEmpty, presentIn: nil, left: nil)
        }
        guard let leftAt = members[index].visit?.leftAt else { return MemberMarks(tracked: true, presentIn: store, left: nil) }
        let department = members[index].visit?.department ?? 0
        return MemberMarks(tracked: true, presentIn: nil, left: .init(store: store, department: department, leftAt: leftAt.milliseconds))
    }

    /// Brings the member indexes (tracked count, members present, visit expiries) up to date with a change of
    /// member `number` from `before`.
    mutating func reindex(_ number: Int32, from before: MemberMarks) {
        let after = marks(of: number)
        guard after != before else { return }
        if after.tracked != before.tracked { trackedMembers += after.tracked ? 1 : -1 }
        if after.presentIn != before.presentIn {
            if let store = before.presentIn { presentByStore[store]?.remove(number) }
            if let store = after.presentIn { presentByStore[store, default: []].insert(number) }
        }
        if let left = after.left, left != before.left {
            let gap = rules(store: left.store, department: left.department).visitGap
            // Rounded up to the millisecond, so the entry is never due before the visit is.
            let wholeGap = gap.wholeMilliseconds
            visitExpiries.push(left.leftAt &+ (Duration.milliseconds(wholeGap) < gap ? wholeGap + 1 : wholeGap), number)
        }
    }

    /// Changes member `number` with `change` and brings the member indexes up to date.
    mutating func changeMember(_ number: Int32, _ change: (inout Person) -> Void) {
        let before = marks(of: number)
        change(&members[Int(number)])
        reindex(number, from: before)
    }

    /// Makes sure member `number` comes up in the first tick at or after `deadline` (`Int64.max`: never).
    mutating func scheduleMember(_ number: Int32, at deadline: Int64) {
        guard deadline < memberQueuedAt[Int(number)] else { return }
        memberDeadlines.push(deadline, number)
        memberQueuedAt[Int(number)] = deadline
    }
}
