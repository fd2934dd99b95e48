extension PresenceEngine {
    /// Hands out the guest stays that ended since the last call (a guest's last reading `exitAfter` old, or lost by
    /// every node): store, department, start and length, never the beacon.
    public mutating func takeGuestVisits() -> [GuestVisit] { guests.takeFinishedVisits() }

    /// Forgets visits that ended more than `visitGap` ago; returns the members whose visit ended for good.
    public mutating func expireVisits(at now: Timestamp) -> [String] {
        expireVisitsByStore(at: now).map(\.member).sorted()
    }

    /// Forgets visits that ended more than `visitGap` ago; returns the members whose visit ended for good, with the
    /// store of that visit, ordered by member.
    public mutating func expireVisitsByStore(at now: Timestamp) -> [(member: String, store: UInt16)] {
        var expired: [(member: String, store: UInt16)] = []
        while let entry = visitExpiries.popDue(at: now.milliseconds) {
            // An entry of a visit since resumed, or forgotten, or of a member number since reused, finds nothing due.
            guard let visit = members[Int(entry.id)].visit, let leftAt = visit.leftAt,
                now - leftAt >= rules(store: visit.store, department: visit.department).visitGap
            else { continue }
            changeMember(entry.id) { $0.visit = nil }
            expired.append((memberIDs[Int(entry.id)], visit.store))
        }
        return expired.sorted { $0.member < $1.member }
    }
}
