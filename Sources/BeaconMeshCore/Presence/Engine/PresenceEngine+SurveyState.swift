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
        /// Per department, its score when no node hears.
        private let unheardScores: [Double]
        /// The fit's weights node by node: `weightsByNode[node × departments + department]`.
        private let weightsByNode: [Double]
        /// `floors[from × departments + to]`: how far below the likeliest department `to` may fall while `from` is
        /// decided (log-belief, < 0), the part of `surveyEvidenceNeeded` below an even chance (`from` itself: as
        /// from a neighbour); then, per department, its floor while none is decided (as from a neighbour).
        private let floors: [Double]
        /// Per department, the most its log-belief may gain on the likeliest per second of readings: three times the
        /// clear lead (`surveyLeadRate`), so an overwhelming move is as fast as the uncalibrated decisive one.
        private let caps: [Double]
        /// Per node of the fit, the index of its department among the fit's (-1: a department the fit lacks), and
        /// whether every department of the fit has a node (the loudest-node evidence needs one per department).
        private let nodeDepartments: [Int]
        private let loudnessCounts: Bool
        /// Reused per decision: what the fresh node readings of the store say (its node's feature index, the lift of
        /// its feature over `notHeard`, its department and proximity), each department's score, loudest reading,
        /// log-belief and floor.
        private var counted: [(feature: Int, lift: Double, department: UInt16, proximity: Proximity)] = []
        private var scores: [Double]
        private var loudest: [Double]
        private var logs: [Double]
        private var floorsNow: [Double]
        /// Reused for the fitness checks: every node's feature.
        private var features: [Double]
        var fitness = SurveyFitness()
        private var lastFitnessCheck: Int64 = 0

        init(fit: SurveyFit, timings: DepartmentTimings, neighbours: [UInt32: Set<UInt16>]) {
            self.fit = fit
            let width = fit.nodes.count
            let count = fit.departments.count
            unheardScores = (0..<count).map { department in
                fit.biases[department] + SurveyFeatures.notHeard
                    * fit.weights[(department * width)..<((department + 1) * width)].reduce(0, +)
            }
            weightsByNode = (0..<(width * count)).map { index in fit.weights[(index % count) * width + index / count] }
            let store = fit.store
            let departments = fit.departments
            // A department's floor under the likeliest: as from a neighbour for the one decided, and while none is.
            func floor(from: UInt16?, to: UInt16) -> Double {
                let timing = timings.timing(store: store, department: to)
                let needed =
                    from.map { from in
                        from == to
                            ? PresenceEngine.surveyLeadRate(timing) * Double(timing.switchDwell) / 1000
                            : PresenceEngine.surveyEvidenceNeeded(from: from, to: to, store: store, timing: timing, neighbours: neighbours)
                    } ?? PresenceEngine.surveyLeadRate(timing) * Double(timing.switchDwell) / 1000
                return -(1 - PresenceEngine.surveySwitchShare) * needed
            }
            floors =
                departments.flatMap { from in departments.map { to in floor(from: from, to: to) } }
                + departments.map { floor(from: nil, to: $0) }
            caps = departments.map { 3 * PresenceEngine.surveyLeadRate(timings.timing(store: store, department: $0)) }
            nodeDepartments = fit.nodes.map { departments.firstIndex(of: $0.department) ?? -1 }
            loudnessCounts = PresenceEngine.surveyLoudnessWeight > 0 && departments.indices.allSatisfy(nodeDepartments.contains)
            scores = [Double](repeating: 0, count: count)
            loudest = scores
            logs = scores
            floorsNow = scores
            features = [Double](repeating: SurveyFeatures.notHeard, count: width)
        }

        /// Brings `belief` up to `now` with the fresh node readings `heard` of its store (`freshest` the freshest of
        /// them), the last decision at `decidedAt` (`Int64.min`: none) and `current` decided, and appends to `result`
        /// the readings the decision weighs: per department that can matter (the current one and the likeliest two),
        /// its probability given the readings so far, as a natural log.
        ///
        /// The filter: over a gap of more than a second every department may catch up at `surveyMoveRate`; the
        /// readings' evidence (the fit's log-odds of each department against the likeliest, capped per second,
        /// weighted by the time since the last decision, up to a second) is added; no department falls below its floor
        /// under the likeliest. Checks now and then how well the readings fit.
        mutating func weigh(
            _ heard: [Reading], as freshest: Reading, current: UInt16?, belief: inout SurveyBelief, decidedAt: Int64,
            into result: inout [Reading], at now: Int64, nodes: [NodeTrack]
        ) {
            let store = freshest.store
            let count = fit.departments.count
            counted.removeAll(keepingCapacity: true)
            var strongest = -Double.infinity
            if loudnessCounts { for index in 0..<count { loudest[index] = SurveyFeatures.floor } }
            for reading in heard where reading.store == store {
                let feature = Int(nodes[Int(reading.node)].surveyFeature)
                guard feature >= 0, now - reading.lastSeen < nodes[Int(reading.node)].staleAfter else { continue }
                counted.append((feature, reading.rssi, reading.department, reading.proximity))
                strongest = max(strongest, reading.rssi)
            }
            // Kept as RSSI until the strongest is known; now the feature's lift.
            for index in counted.indices {
                let relative = max(SurveyFeatures.floor, counted[index].lift - strongest)
                if loudnessCounts {
                    let department = nodeDepartments[counted[index].feature]
                    loudest[department] = max(loudest[department], relative)
                }
                counted[index].lift = relative - SurveyFeatures.notHeard
            }
            let likeliest = score()
            let currentIndex = current.flatMap { fit.departments.firstIndex(of: $0) } ?? -1
            if belief.store != store { belief = SurveyBelief(store: store) }
            if belief.count == 0, currentIndex >= 0 {
                // A member already placed (a restart, a new fit): kept where they are until the evidence moves them.
                belief.count = 1
                belief.departments[0] = fit.departments[currentIndex]
            }
            let elapsed = decidedAt == .min ? PresenceEngine.surveyDecisionInterval : max(0, now - decidedAt)
            update(&belief, current: currentIndex, elapsed: elapsed)
            if now - lastFitnessCheck >= SurveyFitness.interval {
                lastFitnessCheck = now
                for index in features.indices { features[index] = SurveyFeatures.notHeard }
                for reading in counted { features[reading.feature] = SurveyFeatures.notHeard + reading.lift }
                fitness.record(fits: fit.fitness(features, department: likeliest) <= fit.fitnessLimit)
            }
            // The likeliest two by belief, and the current one.
            var first = 0
            var second = -1
            for index in 1..<max(1, count) {
                if logs[index] > logs[first] {
                    (first, second) = (index, first)
                } else if second < 0 || logs[index] > logs[second] {
                    second = index
                }
            }
            for (index, department) in fit.departments.enumerated() where index == first || index == second || index == currentIndex {
                var proximity = Proximity.unknown
                for reading in counted where reading.department == department && reading.proximity < proximity {
                    proximity = reading.proximity
                }
                result.append(
                    Reading(
                        node: freshest.node, store: store, department: department, rssi: logs[index], latest: logs[index],
                        proximity: proximity, fromSurvey: true, lastSeen: freshest.lastSeen))
            }
        }

        /// The filter's step on `belief` (see `weigh`) with the scores of this decision, `elapsed` milliseconds after
        /// the last, `current` the index of the department decided (-1: none); leaves each department's
        /// log-probability in `logs`.
        private mutating func update(_ belief: inout SurveyBelief, current: Int, elapsed: Int64) {
            let count = fit.departments.count
            let weight = Double(min(elapsed, 1000)) / 1000
            // Over a gap, a move may have happened unheard: every department catches up to its share of the chance.
            let gap = Double(elapsed) / 1000 * PresenceEngine.surveyMoveRate
            let caught = elapsed > 1000 ? SurveyMath.log((1 - SurveyMath.exp(-gap)) / Double(count)) : -Double.infinity
            let flat = belief.count == 0
            let row = current >= 0 ? current * count : count * count
            // The evidence of each department against the likeliest by the fit (and by loudness, if it counts).
            var best = -Double.infinity
            for index in 0..<count {
                var evidence = scores[index]
                if loudnessCounts {
                    evidence += PresenceEngine.surveyLoudnessWeight * loudest[index] / PresenceEngine.surveyDecibelsPerNat
                }
                logs[index] = evidence
                best = max(best, evidence)
            }
            var largest = -Double.infinity
            for index in 0..<count {
                let floor = floors[row + index]
                floorsNow[index] = floor
                let department = fit.departments[index]
                let prior = max(flat ? 0 : belief.log(of: department) ?? floor, caught)
                logs[index] = prior + weight * max(logs[index] - best, -caps[index])
                largest = max(largest, logs[index])
            }
            var total = 0.0
            for index in 0..<count {
                logs[index] = max(logs[index] - largest, floorsNow[index])
                total += SurveyMath.exp(logs[index])
            }
            logs.withUnsafeBufferPointer { logs in
                floorsNow.withUnsafeBufferPointer { floors in belief.keep(logs, floors: floors, departments: fit.departments) }
            }
            let logTotal = SurveyMath.log(total)
            for index in 0..<count { logs[index] -= logTotal }
        }

        /// Fills `scores` with each department's discriminant on the readings `counted` (each by its lift over not
        /// being heard); returns the likeliest department (index).
        private mutating func score() -> Int {
            let count = unheardScores.count
            var first = 0
            scores.withUnsafeMutableBufferPointer { scores in
                weightsByNode.withUnsafeBufferPointer { weights in
                    for department in 0..<count {
                        var score = unheardScores[department]
                        for reading in counted { score += weights[reading.feature * count + department] * reading.lift }
                        scores[department] = score
                        if score > scores[first] { first = department }
                    }
                }
            }
            return first
        }
    }
}
