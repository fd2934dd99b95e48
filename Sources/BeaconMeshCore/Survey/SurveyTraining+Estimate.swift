/// How well a fit will decide, estimated the way a running coordinator decides a surveyed store (issue 51): each
/// block of a stretch (at most `foldSeconds`) is held out with the seconds of its stretch just around it, decided by
/// a fit of all the other samples, and those held-out seconds go in time order through the belief over departments
/// (`PresenceEngine.SurveyBelief`) — one wrong second is not a wrong decision, a department that keeps reading like
/// another is.
///
/// Blocks, not whole stretches: a department walked once still gets an estimate (its other seconds stay in the
/// fold), where holding its only stretch out would call every second of it wrong.
extension SurveyTraining {
    /// The longest block of a stretch held out together (milliseconds).
    static let foldSeconds: Int64 = 15_000
    /// Seconds of the held-out block's stretch this close to it are held out too (milliseconds): the next second of
    /// the same walk reads almost the same, and would make the estimate read the block off its neighbours.
    static let foldGuard: Int64 = 5_000

    /// Per sample, each department's log-posterior under the fit of every sample but its block and guard (a
    /// department with nothing left in that fit: `-infinity`); `nil` when no fit could be made without them.
    func heldOutEvidence(at time: Timestamp) -> [[Double]?] {
        let all = Sums(features: features, labels: labels, departments: departments.count, including: { _ in true })
        var evidence = [[Double]?](repeating: nil, count: features.count)
        var logs: [Double] = []
        var start = 0
        while start < features.count {
            // One block: the samples of one stretch from `start`, within `foldSeconds` of its first.
            let first = samples[start].at.milliseconds
            var end = start
            while end < features.count && stretchOf[end] == stretchOf[start] && samples[end].at.milliseconds - first < Self.foldSeconds {
                end += 1
            }
            let last = samples[end - 1].at.milliseconds
            var held = all
            var index = start
            while index > 0 && stretchOf[index - 1] == stretchOf[start] && first - samples[index - 1].at.milliseconds <= Self.foldGuard {
                index -= 1
            }
            while index < features.count && stretchOf[index] == stretchOf[start]
                && samples[index].at.milliseconds - last <= Self.foldGuard
            {
                held.remove(features[index], label: labels[index])
                index += 1
            }
            if let fold = model(from: held, at: time) {
                for member in start..<end {
                    fold.logPosteriors(features[member], into: &logs)
                    for department in logs.indices where held.counts[department] == 0 { logs[department] = -.infinity }
                    evidence[member] = logs
                }
            }
            start = end
        }
        return evidence
    }

    /// Per sample, the department index the belief over departments holds likeliest once that second's `evidence`
    /// is in (`-1`: none), each beacon's samples in time order, as the coordinator decides a member.
    func temporalDecisions(_ evidence: [[Double]?]) -> [Int] {
        var decisions = [Int](repeating: -1, count: evidence.count)
        var belief = PresenceEngine.SurveyBelief()
        var probabilities: [Double] = []
        for index in evidence.indices {
            if index == 0 || samples[index - 1].beacon != samples[index].beacon { belief = PresenceEngine.SurveyBelief() }
            guard let logs = evidence[index] else { continue }
            belief.advance(
                evidence: logs, generation: 1, current: -1, at: samples[index].at.milliseconds, into: &probabilities)
            var best = -1
            for department in logs.indices where logs[department] > -.infinity {
                if best < 0 || probabilities[department] > probabilities[best] { best = department }
            }
            decisions[index] = best
        }
        return decisions
    }
}
