extension PresenceEngine {
    /// Where a surveyed store's member is, as the fit's evidence accumulated over time says: a forward filter over the
    /// store's departments (issue 51). Each second a member stays where they are with probability e^(-1/`stay`) or
    /// moves; then each department's probability is weighed by what the fit says of the readings now, counted at
    /// `evidencePerSecond` nats a second and never below `-evidenceFloor` (a second through the floor is not proof).
    /// So a few wrong seconds no longer flip the decision, and a clear move still does within seconds: the hysteresis
    /// of the decisions then works on this belief, not on one moment's fit.
    ///
    /// Kept per member in a few bytes: the likeliest `kept` departments' probabilities; the others share what is left
    /// equally (they are unlikely, and a decision never needs their order). Kept as probabilities, not their logs: a
    /// decision then takes no exp or log to unpack and pack the belief (a Float holds the 1e-12 a belief goes down to).
    struct SurveyBelief: Sendable {
        /// How many departments a belief keeps.
        static let kept = 4
        /// Mean seconds a member stays in a department before moving, for the filter's prior. Measured on the shared
        /// recordings (leave one out, issue 51): 10–30 s switched later and no less often; the stickiness that
        /// matters is the evidence's cap, below.
        static let stay = 5.0
        /// Nats of evidence a second of readings contributes (successive decisions see overlapping readings: they are
        /// not independent, so evidence is counted by time, not by decision; 1–2 switched seconds later on the
        /// shared recordings).
        static let evidencePerSecond = 3.0
        /// The most a second of readings can count against a department, in nats (× `evidencePerSecond`): a fit made
        /// from one walk can be sure of the wrong department for a second; it takes more than a second of that to
        /// outweigh where the member has been.
        static let evidenceFloor = 8.0
        /// A gap longer than this (milliseconds) counts as this long: evidence is not made up for time unheard.
        static let longestStep: Int64 = 5_000
        /// A belief not brought up to date for this long (milliseconds; the member was not heard) starts afresh.
        static let forgetAfter: Int64 = 30_000
        /// The probability a fresh belief gives the member's department now (members present stay where they are
        /// until the evidence moves them, across restarts and refits).
        static let currentPrior = 0.9

        /// The survey the belief is about (`SurveyState.generation`; 0: no belief yet).
        var generation: UInt32 = 0
        var updatedAt: Int64 = 0
        var count = 0
        /// Indexes into the fit's departments, and their probabilities.
        var departments = InlineArray<4, Int16>(repeating: 0)
        var probabilities = InlineArray<4, Float>(repeating: 0)

        /// Brings the belief to `now` with the fit's log-posteriors `evidence` (one per department, normalised),
        /// and writes the probability of every department into `belief`. `current` is the member's department now
        /// (an index, or -1), for a fresh belief.
        mutating func advance(
            evidence: [Double], generation: UInt32, current: Int, at now: Int64, into belief: inout [Double]
        ) {
            let total = evidence.count
            belief.removeAll(keepingCapacity: true)
            var seconds = 1.0
            if self.generation == generation && count > 0 && now - updatedAt <= Self.forgetAfter {
                expand(total: total, into: &belief)
                seconds = Double(min(max(now - updatedAt, 0), Self.longestStep)) / 1000
            } else {
                let others = current >= 0 && total > 1 ? (1 - Self.currentPrior) / Double(total - 1) : 1 / Double(total)
                for index in 0..<total { belief.append(index == current && total > 1 ? Self.currentPrior : others) }
            }
            self.generation = generation
            updatedAt = now
            if seconds > 0 { Self.step(&belief, evidence: evidence, seconds: seconds) }
            keep(belief)
        }

        /// The log of a probability of `advance`'s, as the decisions weigh it (never below e^-27.6).
        static func logProbability(_ probability: Double) -> Double { SurveyMath.log(max(probability, 1e-12)) }

        /// One step of the filter on the probabilities `belief`, `seconds` after the last.
        private static func step(_ belief: inout [Double], evidence: [Double], seconds: Double) {
            let total = belief.count
            let moved = total > 1 ? 1 - SurveyMath.exp(-seconds / stay) : 0
            let spread = moved / Double(max(total - 1, 1))
            let weight = evidencePerSecond * seconds
            // Most departments of a store are far below the floor: they share one factor, worked out once.
            let floored = SurveyMath.exp(weight * -evidenceFloor)
            var sum = 0.0
            for index in belief.indices {
                let predicted = (1 - moved) * belief[index] + spread * (1 - belief[index])
                let evidence = evidence[index]
                belief[index] = predicted * (evidence <= -evidenceFloor ? floored : SurveyMath.exp(weight * evidence))
                sum += belief[index]
            }
            guard sum > 0 else {
                for index in belief.indices { belief[index] = 1 / Double(total) }
                return
            }
            for index in belief.indices { belief[index] /= sum }
        }

        /// The probabilities of every department from the kept ones (the rest share what is left).
        private func expand(total: Int, into belief: inout [Double]) {
            var keptMass = 0.0
            for slot in 0..<count { keptMass += Double(probabilities[slot]) }
            let rest = total > count ? max(1 - keptMass, 0) / Double(total - count) : 0
            for _ in 0..<total { belief.append(rest) }
            for slot in 0..<count where Int(departments[slot]) < total {
                belief[Int(departments[slot])] = Double(probabilities[slot])
            }
        }

        /// Keeps the likeliest departments of `belief` (probabilities).
        private mutating func keep(_ belief: [Double]) {
            count = 0
            for index in belief.indices {
                var slot = count
                while slot > 0 && belief[Int(departments[slot - 1])] < belief[index] { slot -= 1 }
                guard slot < Self.kept else { continue }
                var move = min(count, Self.kept - 1)
                while move > slot {
                    departments[move] = departments[move - 1]
                    move -= 1
                }
                departments[slot] = Int16(index)
                count = min(count + 1, Self.kept)
            }
            for slot in 0..<count { probabilities[slot] = Float(max(belief[Int(departments[slot])], 1e-12)) }
        }
    }
}
