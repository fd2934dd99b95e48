extension PresenceEngine {
    /// The best fresh reading of a person (the first that no other outranks), the best fresh reading in
    /// `department` and the best of any other department (the rival), counting only readings in `store` when given;
    /// readings weaker than their department's `minRssi` do not count. `lastHeard` is the latest reading of all.
    private static func bestReadings(
        of person: Person, store: UInt16?, department: UInt16?, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings
    )
        -> (best: Reading?, current: Reading?, rival: Reading?, lastHeard: Int64?)
    {
        var best: Reading?
        var current: Reading?
        var rival: Reading?
        var lastHeard: Int64?
        for reading in person.readings {
            if lastHeard == nil || reading.lastSeen > lastHeard! { lastHeard = reading.lastSeen }
            if let store, reading.store != store { continue }
            guard now - reading.lastSeen < nodes[Int(reading.node)].staleAfter,
                !timings.hasMinRSSI || reading.rssi >= timings.timing(store: reading.store, department: reading.department).minRSSI
            else { continue }
            if best.map({ reading.outranks($0) }) ?? true { best = reading }
            if reading.department == department {
                if current.map({ reading.rssi > $0.rssi }) ?? true { current = reading }
            } else if rival.map({ reading.rssi > $0.rssi }) ?? true {
                rival = reading
            }
        }
        return (best, current, rival, lastHeard)
    }

    /// Decides anew where member `number` is at `now` (arrive, resume, leave, switch or stay), appends what changed to
    /// `outputs`, and brings the member's indexes and next check up to date.
    mutating func evaluate(member number: Int32, at now: Int64, into outputs: inout [Output]) {
        // The helpers called below are static and take only the node table and the department timings: as methods
        // of the engine, most calls copied the whole engine value (552 bytes) first.
        let before = marks(of: number)
        // The person is moved out of the table while it is worked on, not copied: a copy shares the readings' buffer
        // with the table, so changing them would copy them, and writing the person back would release the old one.
        var person = Person()
        swap(&person, &members[Int(number)])
        let outputsBefore = outputs.count
        // A surveyed store is decided on its fit's readings, one per department, in place of the nodes' own (kept
        // aside in `heard` for the reasons given and their staleness, and brought back after).
        // The arrays are swapped, not copied: `surveyBuffer` lends its storage to each surveyed decision.
        var surveyed: UInt16?
        if !surveys.isEmpty {
            var buffer: [Reading] = []
            swap(&buffer, &surveyBuffer)
            surveyed = surveyedReadings(of: &person, at: now, into: &buffer)
            if surveyed != nil {
                person.surveyedAt = now
                swap(&person.readings, &buffer)
                swap(&person.heard, &buffer)
            } else {
                swap(&buffer, &surveyBuffer)
            }
        }
        defer {
            person.nextCheck = Self.nextCheck(of: person, after: now, nodes: nodes, timings: timings, neighbours: neighbours)
            if let surveyed {
                swap(&person.readings, &person.heard)
                Self.carryOver(from: person.heard, to: &person.readings, store: surveyed)
                swap(&person.heard, &surveyBuffer)
            }
            let nextCheck = person.nextCheck
            let visit = outputs[outputsBefore...].contains(where: \.changesVisit) ? person.visit : nil
            swap(&person, &members[Int(number)])
            reindex(number, from: before)
            scheduleMember(number, at: nextCheck)
            if let visit { outputs.append(.visitChanged(visit)) }
        }
        let id = memberIDs[Int(number)]

        if var visit = person.visit, visit.leftAt == nil,
            !Self.endedWhileUnheard(&person, visit: &visit, member: id, at: now, into: &outputs, timings: timings)
        {
            Self.evaluateInStore(
                &person, visit: visit, member: id, at: now, nodes: nodes, timings: timings, neighbours: neighbours, into: &outputs)
        } else {
            Self.arriveOrResume(&person, member: id, at: now, nodes: nodes, timings: timings, into: &outputs)
        }
    }

    /// A member in a store: leaves once unheard for `exitAfter`, switches department on decisive or lasting
    /// evidence, or stays (and may turn "unknown" while a challenger leads).
    private static func evaluateInStore(
        _ person: inout Person, visit: Visit, member id: String, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings,
        neighbours: [UInt32: Set<UInt16>], into outputs: inout [Output]
    ) {
        var visit = visit
        defer { person.visit = visit }
        let (best, current, rival, lastHeard) = bestReadings(
            of: person, store: visit.store, department: visit.department, at: now, nodes: nodes, timings: timings)
        if let lastHeard, lastHeard > visit.lastSeen.milliseconds { visit.lastSeen = Timestamp(milliseconds: lastHeard) }
        let exitAfter = timings.timing(store: visit.store, department: visit.department).exitAfter
        if now - visit.lastSeen.milliseconds >= exitAfter && best == nil {
            leave(&person, visit: &visit, member: id, exitAfter: exitAfter, at: now, into: &outputs)
            return
        }
        guard let best else { return }
        if let current { visit.proximity = current.proximity }
        if let decisive = decisiveChallenger(
            of: &person, current: current, store: visit.store, at: now, nodes: nodes, timings: timings, neighbours: neighbours)
        {
            // The evidence outran the smoothing: take the latest readings as they are, so that the smoothed ones
            // do not pull the member straight back.
            for index in person.readings.indices where person.readings[index].store == visit.store {
                person.readings[index].rssi = person.readings[index].latest
            }
            switchDepartment(
                &visit, of: person, to: decisive, member: id, since: person.decisiveSince, at: Timestamp(milliseconds: now),
                nodes: nodes, into: &outputs)
            person.challengerDepartment = nil
            person.decisiveDepartment = nil
            return
        }
        weighChallenger(
            &person, visit: &visit, best: best, current: current, member: id, at: now, nodes: nodes, timings: timings,
            neighbours: neighbours, into: &outputs)
        markUnsure(&visit, of: person, current: current, rival: rival, at: now, timings: timings)
    }

    /// Ends the visit of a member unheard since `exitAfter` after their last reading (a restart may announce it
    /// later than that): announces `left` and forgets the readings and pending switches.
    private static func leave(
        _ person: inout Person, visit: inout Visit, member id: String, exitAfter: Int64, at now: Int64, into outputs: inout [Output]
    ) {
        visit.leftAt = Timestamp(milliseconds: min(now, visit.lastSeen.milliseconds + exitAfter))
        person.readings.removeAll()
        person.challengerDepartment = nil
        person.decisiveDepartment = nil
        person.firstHeard = nil
        outputs.append(
            .left(
                member: id, store: visit.store, department: visit.department,
                dwell: visit.lastSeen - visit.arrivedAt, at: Timestamp(milliseconds: now)))
        outputs.append(.presenceChanged(store: visit.store))
    }

    /// The hysteresis of an ordinary switch: the best reading's department takes over at once when the current one
    /// has no fresh reading; else it must lead by `switchMargin` long enough to gather `evidenceNeeded`.
    private static func weighChallenger(
        _ person: inout Person, visit: inout Visit, best: Reading, current: Reading?, member id: String, at now: Int64,
        nodes: [NodeTrack], timings: DepartmentTimings, neighbours: [UInt32: Set<UInt16>], into outputs: inout [Output]
    ) {
        let nowTime = Timestamp(milliseconds: now)
        if best.department == visit.department {
            person.challengerDepartment = nil
        } else if current == nil {
            switchDepartment(&visit, of: person, to: best, member: id, since: now, at: nowTime, nodes: nodes, into: &outputs)
            person.challengerDepartment = nil
        } else if let current,
            best.rssi >= current.rssi + timings.timing(store: visit.store, department: best.department).switchMargin
        {
            if person.challengerDepartment != best.department {
                person.challengerDepartment = best.department
                person.challengerSince = now
                person.challengerEvidence = 0
            } else {
                person.challengerEvidence += person.challengerLead * Double(now - person.challengerCheckedAt)
            }
            let timing = timings.timing(store: visit.store, department: best.department)
            person.challengerLead = min(best.rssi - current.rssi, 3 * timing.switchMargin)
            person.challengerCheckedAt = now
            if person.challengerEvidence
                >= evidenceNeeded(from: visit.department, to: best.department, store: visit.store, timing: timing, neighbours: neighbours)
            {
                switchDepartment(
                    &visit, of: person, to: best, member: id, since: person.challengerSince, at: nowTime, nodes: nodes,
                    into: &outputs)
                person.challengerDepartment = nil
            }
        } else {
            person.challengerDepartment = nil
        }
    }

    /// A challenger that has led for a sixth of the dwell: the member may be on the move, and "not sure yet" beats a
    /// wrong department on the shop floor (the snapshot says `department: null`; no event).
    ///
    /// The confidence shown is the placement's: set when it is decided, and when it turns unknown or back.
    private static func markUnsure(
        _ visit: inout Visit, of person: Person, current: Reading?, rival: Reading?, at now: Int64, timings: DepartmentTimings
    ) {
        let unknown =
            person.challengerDepartment.map {
                now - person.challengerSince >= timings.timing(store: visit.store, department: $0).switchDwell / 6
            } ?? false
        if unknown != visit.departmentUnknown {
            visit.departmentUnknown = unknown
            visit.confidence = unknown ? 0.5 : confidence(current: current, rival: rival)
        }
    }

    /// A member in no store: arrives (or resumes a visit left within `visitGap`) once the first readings have settled
    /// for `arrivalSettle`; with no fresh reading, forgets when they were first heard.
    private static func arriveOrResume(
        _ person: inout Person, member id: String, at now: Int64, nodes: [NodeTrack], timings: DepartmentTimings,
        into outputs: inout [Output]
    ) {
        let (best, _, _, lastHeard) = bestReadings(of: person, store: nil, department: nil, at: now, nodes: nodes, timings: timings)
        guard let best, let firstHeard = person.firstHeard else {
            person.firstHeard = nil
            return
        }
        let rules = timings.timing(store: best.store, department: best.department)
        guard now - firstHeard >= rules.arrivalSettle else { return }
        let nowTime = Timestamp(milliseconds: now)
        let lastSeen = Timestamp(milliseconds: lastHeard ?? now)
        if let previous = person.visit, previous.store == best.store, let leftAt = previous.leftAt,
            now - leftAt.milliseconds < rules.visitGap
        {
            var visit = previous
            visit.leftAt = nil
            visit.lastSeen = lastSeen
            visit.proximity = best.proximity
            if visit.department != best.department {
                visit.department = best.department
                visit.inDepartmentSince = nowTime
            }
            let evidence = Self.evidence(
                of: person, department: best.department, store: best.store, held: now - firstHeard, at: now, nodes: nodes)
            visit.confidence = evidence.confidence
            person.visit = visit
            outputs.append(.resumed(member: id, store: best.store, department: best.department, at: nowTime, evidence: evidence))
        } else {
            person.visit = Visit(
                member: id, store: best.store, arrivedAt: nowTime, department: best.department,
                inDepartmentSince: nowTime, lastSeen: lastSeen, leftAt: nil, proximity: best.proximity)
            let evidence = Self.evidence(
                of: person, department: best.department, store: best.store, held: now - firstHeard, at: now, nodes: nodes)
            person.visit?.confidence = evidence.confidence
            outputs.append(.arrived(member: id, store: best.store, department: best.department, at: nowTime, evidence: evidence))
        }
        person.challengerDepartment = nil
        person.decisiveDepartment = nil
        outputs.append(.presenceChanged(store: best.store))
    }

    /// Ends a visit whose member went unheard for `exitAfter` and has been heard again since — which only a restart
    /// allows (ticks end visits in time): the visit ended `exitAfter` after its last reading, and what was heard
    /// since may begin the next one (a new visit, or the same one resumed within `visitGap` of that end).
    /// Returns whether it ended the visit.
    private static func endedWhileUnheard(
        _ person: inout Person, visit: inout Visit, member: String, at now: Int64,
        into outputs: inout [Output], timings: DepartmentTimings
    ) -> Bool {
        let gone = visit.lastSeen.milliseconds + timings.timing(store: visit.store, department: visit.department).exitAfter
        guard gone <= now, let lastHeard = person.readings.map(\.lastSeen).max(), lastHeard >= gone else { return false }
        visit.leftAt = Timestamp(milliseconds: gone)
        person.visit = visit
        person.readings.removeAll { $0.lastSeen < gone }
        person.challengerDepartment = nil
        person.decisiveDepartment = nil
        person.firstHeard = now
        outputs.append(
            .left(
                member: member, store: visit.store, department: visit.department, dwell: visit.lastSeen - visit.arrivedAt,
                at: Timestamp(milliseconds: now)))
        outputs.append(.presenceChanged(store: visit.store))
        return true
    }
}
