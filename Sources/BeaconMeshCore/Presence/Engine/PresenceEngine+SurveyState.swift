extension PresenceEngine {
    /// A surveyed store's fit, arranged for deciding 100 k sightings/s without allocating per decision.
    ///
    /// A department's discriminant is `bias + Σ weight × feature` over every node of the survey, and a node that
    /// does not hear the beacon has the constant feature `SurveyFeatures.notHeard`. So each department starts from its
    /// score with no node hearing (`unheardScores`), and each node that hears adds its weight × (feature − notHeard):
    /// a decision costs one multiply-add per department for each node that hears the person (two or three of a
    /// store's ten), not for every node. The weights are kept node by node (`weightsByNode`) for that.
    struct SurveyState: Sendable {
        var fit: SurveyFit
        /// Tells this fit's beliefs from those of the fit before (`SurveyBelief.generation`; never 0).
        let generation: UInt32
        /// Per department, its score when no node hears.
        private let unheardScores: [Double]
        /// The fit's weights node by node: `weightsByNode[node × departments + department]`.
        private let weightsByNode: [Double]
        /// Reused per decision: what the fresh node readings of the store say (its node's feature index, the lift of
        /// its feature over `notHeard`, its department and proximity), and each department's score (then its
        /// log-posterior) on them.
        private var counted: [(feature: Int, lift: Double, department: UInt16, proximity: Proximity)] = []
        private var scores: [Double]
        /// Reused per decision: every department's probability in the member's belief.
        private var believed: [Double] = []
        /// Reused for the fitness checks: every node's feature.
        private var features: [Double]
        var fitness = SurveyFitness()
        private var lastFitnessCheck: Int64 = 0

        init(fit: SurveyFit, generation: UInt32) {
            self.fit = fit
            self.generation = generation
            let width = fit.nodes.count
            let count = fit.departments.count
            unheardScores = (0..<count).map { department in
                fit.biases[department] + SurveyFeatures.notHeard
                    * fit.weights[(department * width)..<((department + 1) * width)].reduce(0, +)
            }
            weightsByNode = (0..<(width * count)).map { index in fit.weights[(index % count) * width + index / count] }
            scores = [Double](repeating: 0, count: count)
            features = [Double](repeating: SurveyFeatures.notHeard, count: width)
        }

        /// Appends to `result` the readings of the departments of the fit that can matter to a decision on the node
        /// readings `heard` of its store (fresh ones count; `freshest` is the freshest of them), each department's
        /// "RSSI" its log-probability in `belief` once the fit's evidence of now is added (`SurveyBelief`): the
        /// likeliest two and `current`, the member's department now. The others are far less likely than these, so
        /// no rule of the decisions would pick them. Checks now and then how well the readings fit.
        mutating func weigh(
            _ heard: [Reading], as freshest: Reading, current: UInt16?, belief: inout SurveyBelief, into result: inout [Reading],
            at now: Int64, nodes: [NodeTrack]
        ) {
            let store = freshest.store
            counted.removeAll(keepingCapacity: true)
            var strongest = -Double.infinity
            for reading in heard where reading.store == store {
                let feature = Int(nodes[Int(reading.node)].surveyFeature)
                guard feature >= 0, now - reading.lastSeen < nodes[Int(reading.node)].staleAfter else { continue }
                // The latest readings, not the smoothed: the belief does the smoothing.
                counted.append((feature, reading.latest, reading.department, reading.proximity))
                strongest = max(strongest, reading.latest)
            }
            // Kept as RSSI until the strongest is known; now the feature's lift.
            for index in counted.indices {
                counted[index].lift = max(SurveyFeatures.floor, counted[index].lift - strongest) - SurveyFeatures.notHeard
            }
            let likeliest = score()
            let currentIndex = current.flatMap { fit.departments.firstIndex(of: $0) } ?? -1
            let logTotal = Self.logTotal(scores, largest: scores[likeliest])
            for index in scores.indices { scores[index] -= logTotal }
            belief.advance(evidence: scores, generation: generation, current: currentIndex, at: now, into: &believed)
            if now - lastFitnessCheck >= SurveyFitness.interval {
                lastFitnessCheck = now
                for index in features.indices { features[index] = SurveyFeatures.notHeard }
                for reading in counted { features[reading.feature] = SurveyFeatures.notHeard + reading.lift }
                fitness.record(fits: fit.fitness(features, department: likeliest) <= fit.fitnessLimit)
            }
            let first = belief.count > 0 ? Int(belief.departments[0]) : likeliest
            let second = belief.count > 1 ? Int(belief.departments[1]) : -1
            for (index, department) in fit.departments.enumerated()
            where index == first || index == second || index == currentIndex {
                var proximity = Proximity.unknown
                for reading in counted where reading.department == department && reading.proximity < proximity {
                    proximity = reading.proximity
                }
                let rssi = PresenceEngine.surveyDecibelsPerNat * SurveyBelief.logProbability(believed[index])
                result.append(
                    Reading(
                        node: freshest.node, store: store, department: department, rssi: rssi, latest: rssi, proximity: proximity,
                        fromSurvey: true, lastSeen: freshest.lastSeen))
            }
        }

        /// Fills `scores` with each department's discriminant on the readings `counted` (each by its lift over not
        /// being heard); returns the likeliest department (an index). Node by node, so that the inner loop runs over a
        /// node's weights side by side (`weightsByNode`), and the largest score is kept in a register, not read back.
        private mutating func score() -> Int {
            let count = unheardScores.count
            scores.withUnsafeMutableBufferPointer { scores in
                unheardScores.withUnsafeBufferPointer { unheard in
                    for department in 0..<count { scores[department] = unheard[department] }
                }
                weightsByNode.withUnsafeBufferPointer { weights in
                    for reading in counted {
                        let base = reading.feature * count
                        let lift = reading.lift
                        for department in 0..<count { scores[department] += weights[base + department] * lift }
                    }
                }
            }
            var first = 0
            var largest = -Double.infinity
            for department in 0..<count where scores[department] > largest {
                largest = scores[department]
                first = department
            }
            return first
        }

        /// The log of the sum of e^score over all departments, `largest` the largest score (a department's
        /// log-probability is its score less that).
        private static func logTotal(_ scores: [Double], largest: Double) -> Double {
            var total = 0.0
            for score in scores where score - largest > -40 {
                // e^-40 is below a double's precision next to the largest's 1: no need to work it out.
                total += SurveyMath.exp(score - largest)
            }
            return largest + SurveyMath.log(total)
        }
    }
}
