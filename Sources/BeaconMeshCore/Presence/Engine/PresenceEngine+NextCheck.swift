extension PresenceEngine {
    /// The earliest time after `now` at which time alone could change what `evaluate` decides for `person`: a fresh
    /// reading going stale, the exit of a visit, the end of a switch dwell, the settling of an arrival.
    static func nextCheck(
        of person: Person, after now: Int64, nodes: [NodeTrack], timings: DepartmentTimings, neighbours: [UInt32: Set<UInt16>]
    ) -> Int64 {
        var next = Int64.max
        // A node's reading going stale changes a surveyed store's fit too (`heard` holds them then; a surveyed
        // decision has no decisive rule, its belief is the evidence).
        for reading in person.readings {
            let stale = reading.lastSeen + nodes[Int(reading.node)].staleAfter
            if stale > now { next = min(next, stale) }
        }
        for reading in person.heard {
            let stale = reading.lastSeen + nodes[Int(reading.node)].staleAfter
            if stale > now { next = min(next, stale) }
        }
        if let visit = person.visit, visit.leftAt == nil {
            next = min(
                next, visit.lastSeen.milliseconds + timings.timing(store: visit.store, department: visit.department).exitAfter)
            if let challenger = person.decisiveDepartment {
                next = min(next, person.decisiveSince + timings.timing(store: visit.store, department: challenger).switchDwell / 3)
            } else if person.heard.isEmpty,
                decisiveLead(of: person, over: visit.department, store: visit.store, at: now, nodes: nodes, timings: timings) != nil
            {
                // A lead that began outside the in-store evaluation (at the arrival itself) is tracked from the next tick.
                next = min(next, now + 1)
            }
            if let challenger = person.challengerDepartment {
                // When the evidence will be enough if the lead holds, and when the member turns "unknown".
                let timing = timings.timing(store: visit.store, department: challenger)
                let needed = evidenceNeeded(
                    from: visit.department, to: challenger, store: visit.store, timing: timing, neighbours: neighbours)
                let gathered = person.challengerEvidence + person.challengerLead * Double(now - person.challengerCheckedAt)
                let missing = max(0, needed - gathered)
                next = min(next, now + max(1, Int64((missing / max(person.challengerLead, 0.001)).rounded(.up))))
                let unsure = person.challengerSince + timing.switchDwell / 6
                if unsure > now { next = min(next, unsure) }
            }
        } else if let firstHeard = person.firstHeard {
            var settle = person.readings.isEmpty ? 0 : Int64.max
            for reading in person.readings {
                settle = min(settle, timings.timing(store: reading.store, department: reading.department).arrivalSettle)
            }
            next = min(next, firstHeard + settle)
        }
        return next
    }
}
