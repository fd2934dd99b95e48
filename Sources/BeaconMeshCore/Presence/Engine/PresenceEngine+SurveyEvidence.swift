extension PresenceEngine {
    /// A surveyed department's probability given the readings so far (the belief's), to two decimals.
    static func surveyProbability(_ reading: Reading) -> Double {
        (SurveyMath.exp(reading.rssi) * 100).rounded() / 100
    }

    /// Why a surveyed store's member is placed where they are: the probability of the department and of the
    /// runner-up given the readings so far, and what the strongest nodes hear — "survey: department 20 0.96, department 10 0.03; node up
    /// -78.0, node living -72.0".
    static func surveyEvidence(of person: Person, mine: Reading, rival: Reading?, at now: Int64, nodes: [NodeTrack])
        -> DecisionEvidence
    {
        var reason = "survey: department \(mine.department) \(twoDecimals(surveyProbability(mine)))"
        if let rival { reason += ", department \(rival.department) \(twoDecimals(surveyProbability(rival)))" }
        let heard =
            person.heard
            .filter { $0.store == mine.store && now - $0.lastSeen < nodes[Int($0.node)].staleAfter }
            .sorted { $0.rssi > $1.rssi }
            .prefix(3)
        if !heard.isEmpty {
            reason += "; " + heard.map { "\(describe($0, nodes: nodes)) \(oneDecimal($0.rssi))" }.joined(separator: ", ")
        }
        return DecisionEvidence(confidence: surveyProbability(mine), reason: reason)
    }

    /// `value` (0–1) with two decimals: `0.96`.
    static func twoDecimals(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
