extension PresenceEngine {
    /// A member: their readings, their visit and a pending department switch.
    struct Person: Sendable {
        var readings: [Reading] = []
        /// While a surveyed store's decision is taken on its fit's readings (in `readings`), the nodes' own; empty
        /// otherwise.
        var heard: [Reading] = []
        var firstHeard: Int64?
        var visit: Visit?
        var challengerDepartment: UInt16?
        var challengerSince: Int64 = 0
        /// The challenger's lead over the current department (dB, at most three times `switchMargin`) added up over
        /// the time it has held, in dB·ms; the lead at the last evaluation, and when that was.
        var challengerEvidence: Double = 0
        var challengerLead: Double = 0
        var challengerCheckedAt: Int64 = 0
        /// A department whose latest readings have led the current one's by three times the margin, without a
        /// break, since `decisiveSince`.
        var decisiveDepartment: UInt16?
        var decisiveSince: Int64 = 0
        /// The batch that last touched this person, so a batch evaluates each person once.
        var lastBatch: UInt64 = 0
        /// Milliseconds since the epoch at which time alone (a reading going stale, an exit, a switch dwell, an
        /// arrival settling) could change this person's state; ticks before then skip them.
        var nextCheck: Int64 = 0
        /// When this person was last decided from a store's survey (`Int64.min`: never): a batch within
        /// `surveyDecisionInterval` after that only schedules the next decision (`PresenceEngine.surveyDecisionInterval`).
        var surveyedAt: Int64 = .min
        /// Where a surveyed store's fit has placed this member over time (`SurveyBelief`).
        var surveyBelief = SurveyBelief()

        /// Whether the engine counts this member as tracked: heard lately or with a visit to remember.
        var isTracked: Bool { !readings.isEmpty || visit != nil }
    }
}
