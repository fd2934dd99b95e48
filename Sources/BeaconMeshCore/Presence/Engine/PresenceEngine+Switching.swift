extension PresenceEngine {
    /// The contract's decisive switch: another department's latest fresh reading has beaten the current
    /// department's by three times `switchMargin` at every evaluation for a third of `switchDwell`. Returns that
    /// department's reading once the third has passed; keeps track of the lead in `person` meanwhile.
    static func decisiveChallenger(
        of person: inout Person, current: Reading?, store: UInt16, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings,
        neighbours: [UInt32: Set<UInt16>]
    ) -> Reading? {
        guard let current,
            let challenger = decisiveLead(of: person, over: current.department, store: store, at: now, nodes: nodes, timings: timings)
        else {
            person.decisiveDepartment = nil
            return nil
        }
        if person.decisiveDepartment != challenger.department {
            person.decisiveDepartment = challenger.department
            person.decisiveSince = now
        }
        var third = timings.timing(store: store, department: challenger.department).switchDwell / 3
        if !isNeighbour(challenger.department, of: current.department, store: store, neighbours: neighbours) { third *= 2 }
        return now - person.decisiveSince >= third ? challenger : nil
    }

    /// The strongest latest fresh reading of another department of `store` that beats `department`'s by three times
    /// `switchMargin` now, if there is one (and `department` has a fresh reading).
    static func decisiveLead(
        of person: Person, over department: UInt16, store: UInt16, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings
    ) -> Reading? {
        var challenger: Reading?
        var currentLatest: Double?
        for reading in person.readings
        where reading.store == store && now - reading.lastSeen < nodes[Int(reading.node)].staleAfter
            && (!timings.hasMinRSSI || reading.latest >= timings.timing(store: store, department: reading.department).minRSSI)
        {
            if reading.department == department {
                currentLatest = max(currentLatest ?? reading.latest, reading.latest)
            } else if challenger.map({ reading.latest > $0.latest }) ?? true {
                challenger = reading
            }
        }
        guard let challenger, let currentLatest,
            challenger.latest >= currentLatest + 3 * timings.timing(store: store, department: challenger.department).switchMargin
        else { return nil }
        return challenger
    }

    /// Whether one can walk from `from` to `department` directly: `from` names no neighbours, or names it.
    static func isNeighbour(_ department: UInt16, of from: UInt16, store: UInt16, neighbours: [UInt32: Set<UInt16>]) -> Bool {
        neighbours[UInt32(store) << 16 | UInt32(from)]?.contains(department) ?? true
    }

    /// The evidence a challenger needs to take a member from `from` to `to`, in dB·ms: `switchMargin` held for
    /// `switchDwell` (12 dB·s by default), twice that to a department that is not a neighbour.
    ///
    /// The contract's two rules are the ends of one: a lead of `switchMargin` must hold for `switchDwell`, a lead of
    /// three times it for a third of `switchDwell`. Between them, a lead (counted up to three times the margin, and
    /// never less than the margin) gathers evidence at its size: 8 dB switches in 1.5 s, as 4 dB in 3 s.
    static func evidenceNeeded(
        from: UInt16, to: UInt16, store: UInt16, timing: DepartmentTimings.Timing, neighbours: [UInt32: Set<UInt16>]
    ) -> Double {
        let needed = timing.switchMargin * Double(timing.switchDwell)
        return isNeighbour(to, of: from, store: store, neighbours: neighbours) ? needed : 2 * needed
    }

    static func switchDepartment(
        _ visit: inout Visit, of person: Person, to best: Reading, member: String, since: Int64, at now: Timestamp,
        nodes: [NodeTrack], into outputs: inout [Output]
    ) {
        let from = visit.department
        let evidence = evidence(
            of: person, department: best.department, store: visit.store, held: now.milliseconds - since, at: now.milliseconds,
            nodes: nodes)
        visit.department = best.department
        visit.inDepartmentSince = now
        visit.proximity = best.proximity
        visit.confidence = evidence.confidence
        visit.departmentUnknown = false
        outputs.append(.moved(member: member, store: visit.store, from: from, to: best.department, at: now, evidence: evidence))
        outputs.append(.presenceChanged(store: visit.store))
    }
}
