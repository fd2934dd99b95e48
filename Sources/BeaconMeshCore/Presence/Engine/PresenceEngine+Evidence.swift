extension PresenceEngine {
    /// Why `person` is placed in `department` of `store` at `now`, and how sure: the department's strongest fresh
    /// reading against the strongest of any other department (the runner-up), held for `held` milliseconds.
    ///
    /// Confidence grows with the lead in dB (a logistic curve: level 0.5, 4 dB 0.79, 8 dB 0.93, 12 dB 0.98) and is
    /// held back while the lead is young (under a second it counts half); a department no other one contests is 0.95.
    static func evidence(
        of person: Person, department: UInt16, store: UInt16, held: Int64, at now: Int64, nodes: [NodeTrack]
    ) -> DecisionEvidence {
        var mine: Reading?
        var rival: Reading?
        for reading in person.readings where reading.store == store && now - reading.lastSeen < nodes[Int(reading.node)].staleAfter {
            if reading.department == department {
                if mine.map({ reading.rssi > $0.rssi }) ?? true { mine = reading }
            } else if rival.map({ reading.rssi > $0.rssi }) ?? true {
                rival = reading
            }
        }
        let seconds = oneDecimal(Double(max(0, held)) / 1000)
        if let mine, mine.fromSurvey { return surveyEvidence(of: person, mine: mine, rival: rival, at: now, nodes: nodes) }
        guard let mine else {
            return DecisionEvidence(confidence: 0.3, reason: "no fresh reading in department \(department); kept for \(seconds) s")
        }
        let source = describe(mine, nodes: nodes)
        guard let rival else {
            return DecisionEvidence(
                confidence: 0.95,
                reason: "\(source) hears \(oneDecimal(mine.rssi)) dBm; no other department hears the member")
        }
        let lead = mine.rssi - rival.rssi
        var confidence = confidence(current: mine, rival: rival)
        if held < 1000 { confidence = 0.5 + (confidence - 0.5) * 0.5 }
        return DecisionEvidence(
            confidence: confidence,
            reason:
                "\(source) hears \(oneDecimal(mine.rssi)) dBm, \(oneDecimal(lead)) dB above department \(rival.department) (\(describe(rival, nodes: nodes))), for \(seconds) s"
        )
    }

    /// How sure a placement is from the lead of the department's best fresh reading (`current`) over the best of any
    /// other (`rival`): a logistic curve in the lead, 1 / (1 + e^(-lead / 3.6)) — 0.5 at a tie, 0.79 at 4 dB, 0.93 at
    /// 8 dB, below 0.5 while hysteresis keeps a department that trails; 0.95 with no rival, 0.3 with no reading.
    static func confidence(current: Reading?, rival: Reading?) -> Double {
        guard let current else { return 0.3 }
        if current.fromSurvey { return surveyProbability(current) }
        guard let rival else { return 0.95 }
        let spread = (current.rssi - rival.rssi) / 3.6
        let value = spread >= 0 ? 1 / (1 + decay(spread)) : 1 - 1 / (1 + decay(-spread))
        return (value * 100).rounded() / 100
    }

    /// `value` with one decimal, as people read dB and seconds: `-62.5`, `3.0`.
    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        return "\(sign)\(abs(tenths) / 10).\(abs(tenths) % 10)"
    }

    /// A reading's source in words: "node a" or "the member's phone".
    static func describe(_ reading: Reading, nodes: [NodeTrack]) -> String {
        nodes[Int(reading.node)].isPhone ? "the member's phone" : "node \(nodes[Int(reading.node)].address.node)"
    }
}
