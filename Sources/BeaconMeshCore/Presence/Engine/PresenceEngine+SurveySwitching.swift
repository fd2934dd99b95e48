extension PresenceEngine {
    /// A surveyed store's switch rule, on its belief's readings (each department's probability given the readings
    /// so far, as a natural log): the likeliest department takes over once it leads the current one by
    /// `surveySwitchShare` of `surveyEvidenceNeeded` — the belief has gathered the move's evidence, the rest having
    /// lifted it from its floor — and at once when the current department has no reading. While another department
    /// is likelier than the current one but not yet by that much, the member is "unknown" (no event).
    ///
    /// The belief gains at most three times the clear lead per second, so an overwhelming move takes a third of
    /// `switchDwell` (two thirds to a non-neighbour) and a clear one (`switchMargin` at `surveyDecibelsPerNat`) at
    /// most `switchDwell`, as in a store without a survey.
    static func weighSurveyed(
        _ person: inout Person, visit: inout Visit, best: Reading, current: Reading?, member id: String, at now: Int64,
        nodes: [NodeTrack], timings: DepartmentTimings, neighbours: [UInt32: Set<UInt16>], into outputs: inout [Output]
    ) {
        person.challengerDepartment = nil
        person.decisiveDepartment = nil
        var unknown = false
        if best.department != visit.department {
            if let current {
                let timing = timings.timing(store: visit.store, department: best.department)
                let needed =
                    surveySwitchShare
                    * surveyEvidenceNeeded(
                        from: visit.department, to: best.department, store: visit.store, timing: timing, neighbours: neighbours)
                if best.rssi - current.rssi >= needed {
                    switchDepartment(
                        &visit, of: person, to: best, member: id, since: now, at: Timestamp(milliseconds: now), nodes: nodes,
                        into: &outputs)
                    return
                }
                unknown = best.rssi > current.rssi
            } else {
                switchDepartment(
                    &visit, of: person, to: best, member: id, since: now, at: Timestamp(milliseconds: now), nodes: nodes,
                    into: &outputs)
                return
            }
        }
        if unknown != visit.departmentUnknown {
            visit.departmentUnknown = unknown
            visit.confidence = unknown ? 0.5 : (current.map(surveyProbability) ?? 0.3)
        }
    }
}
