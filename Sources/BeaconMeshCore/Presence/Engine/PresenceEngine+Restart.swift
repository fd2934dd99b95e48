extension PresenceEngine {
    /// Restores visits saved before a restart (open ones and recently left ones, for `visitGap`).
    public mutating func restore(_ visits: [Visit]) {
        for var visit in visits where departments[visit.store] != nil {
            let number = memberNumber(for: visit.member)
            // The readings behind the placement are gone with the restart: as sure as a restored decision can be.
            visit.confidence = DecisionEvidence.restored.confidence
            changeMember(number) {
                $0.visit = visit
                $0.nextCheck = 0
            }
            scheduleMember(number, at: 0)
        }
    }

    /// Takes `store` over from another decider (a lease changed hands): the store's visits become `visits` (the
    /// registry's, as the previous decider left them), without emitting events.
    ///
    /// A standby that kept its engine warm heard the same sightings: a visit it holds open in the store keeps the later
    /// of its own last-seen time and the registry's (the registry's is saved only now and then), so a member heard all
    /// along is not taken for one who went away. A visit it holds in the store that the registry lacks was never
    /// announced: it is dropped, and its member, if still heard, arrives (and is greeted) once their readings settle.
    public mutating func takeOver(store: UInt16, visits: [Visit]) {
        guard departments[store] != nil else { return }
        var given: [String: Visit] = [:]
        for visit in visits where visit.store == store { given[visit.member] = visit }
        for (id, number) in memberNumbers {
            guard let held = members[Int(number)].visit, held.store == store else { continue }
            if var visit = given[id] {
                if held.leftAt == nil, visit.leftAt == nil, held.lastSeen > visit.lastSeen { visit.lastSeen = held.lastSeen }
                given[id] = visit
            } else {
                changeMember(number) { person in
                    person.visit = nil
                    person.firstHeard = person.readings.map(\.lastSeen).min()
                    person.nextCheck = 0
                }
                scheduleMember(number, at: 0)
            }
        }
        restore(given.values.sorted { $0.member < $1.member })
    }
}
