extension PresenceEngine {
    /// Where a person in a surveyed store is, as a belief over the store's departments carried from one decision to
    /// the next (a forward filter): the decisions switch on it, not on each decision's readings alone.
    ///
    /// Kept small (20 bytes), inline in the person, set only while they are heard in a surveyed store: the few departments the
    /// belief sets above their floor (`capacity`), each with its log-probability relative to the likeliest one (0 for
    /// it); every other department of the fit is at its floor (`SurveyState.floors`). No department listed: no
    /// belief yet (every department alike).
    struct SurveyBelief: Sendable {
        /// The most departments held above their floor: one placement and the challengers that can take it over.
        static let capacity = 4
        /// Log-beliefs are kept in steps of 1/512 nat (down to -64 nats: far below any floor of sensible rules),
        /// so that the whole belief is 20 bytes.
        static let step = 512.0
        var departments = SIMD4<UInt16>(repeating: 0)
        var logs = SIMD4<Int16>(repeating: 0)
        var count: UInt8 = 0
        /// The store the belief is about.
        var store: UInt16 = 0

        /// The log-belief of `department` relative to the likeliest, or `nil` when it is at its floor.
        func log(of department: UInt16) -> Double? {
            for index in 0..<Int(count) where departments[index] == department { return Double(logs[index]) / Self.step }
            return nil
        }

        /// `log` (≤ 0) in the belief's steps.
        static func stored(_ log: Double) -> Int16 { Int16(max(-32767, (log * step).rounded())) }

        /// Keeps the `capacity` departments of `logs` (per fit department, relative to the likeliest, ≤ 0) that
        /// stand highest above their `floors`; the rest fall to their floor.
        mutating func keep(_ logs: UnsafeBufferPointer<Double>, floors: UnsafeBufferPointer<Double>, departments ids: [UInt16]) {
            func rank(_ index: Int) -> Double { logs[index] - floors[index] }
            count = 0
            var ranks = SIMD4<Double>(repeating: 0)
            var indexes = SIMD4<Int32>(repeating: 0)
            for index in logs.indices where rank(index) > 1e-9 {
                let height = rank(index)
                var slot = Int(count)
                if slot == Self.capacity {
                    // Full: replace the entry ranked lowest, if this one ranks higher.
                    var lowest = 0
                    for kept in 1..<Self.capacity where ranks[kept] < ranks[lowest] { lowest = kept }
                    guard height > ranks[lowest] else { continue }
                    slot = lowest
                } else {
                    count += 1
                }
                ranks[slot] = height
                indexes[slot] = Int32(index)
            }
            for slot in 0..<Int(count) {
                let index = Int(indexes[slot])
                departments[slot] = ids[index]
                self.logs[slot] = Self.stored(logs[index])
            }
        }
    }

    /// How fast a person is taken to walk to another department, per second, when nothing is heard of them: the
    /// belief's prediction over a gap lets every department catch up at this rate (a move a minute).
    static let surveyMoveRate = 1.0 / 60

    /// The share of a move's evidence (`surveyEvidenceNeeded`) gathered above the department decided: the rest
    /// lifts the challenger from its floor up to an even chance. A challenger half that far is likelier than the
    /// current department: the member is "unknown" until one of them wins.
    static let surveySwitchShare = 0.25

    /// How much the loudest-node evidence (each department's loudest node against the loudest of all, at
    /// `surveyDecibelsPerNat` dB per nat, as the uncalibrated rules weigh it) counts beside the survey's fit.
    static let surveyLoudnessWeight = 0.0

    /// The evidence (natural-log odds) that takes a member of a surveyed store from `from` to `to`: what a lead of
    /// `switchMargin` (`surveyDecibelsPerNat` dB per nat, so e^1.3 ≈ 4 times likelier by default) gathers in
    /// `switchDwell`, twice that to a department that is not a neighbour — the uncalibrated rules' evidence in nats.
    /// A lead counts up to three times the margin per second, so an overwhelming move takes a third of `switchDwell`
    /// (two thirds to a non-neighbour), as the uncalibrated decisive switch.
    static func surveyEvidenceNeeded(
        from: UInt16, to: UInt16, store: UInt16, timing: DepartmentTimings.Timing, neighbours: [UInt32: Set<UInt16>]
    ) -> Double {
        let needed = surveyLeadRate(timing) * Double(timing.switchDwell) / 1000
        return isNeighbour(to, of: from, store: store, neighbours: neighbours) ? needed : 2 * needed
    }

    /// The lead that counts as clear, in nats per second: `switchMargin` at `surveyDecibelsPerNat` dB per nat.
    static func surveyLeadRate(_ timing: DepartmentTimings.Timing) -> Double {
        timing.switchMargin / surveyDecibelsPerNat
    }
}
