import BeaconMeshCore

/// How a decider did on a recording, second by second against the ground truth.
///
/// A scored second is one whose middle falls in a truth span; the decision at that middle is right (the true
/// department), wrong (another department) or unknown (none: not yet placed, or "unknown beats wrong").
public struct AccuracyScore: Sendable, Equatable {
    public var right = 0
    public var wrong = 0
    public var unknown = 0
    /// Department changes the decider made, and the true ones.
    public var changes = 0
    public var trueChanges = 0
    /// Per true change that the decider followed before the next one: milliseconds until it decided the new
    /// department.
    public var switchLatencies: [Int64] = []
    /// True changes the decider never followed before the next one.
    public var missedChanges = 0
    /// Seconds by true department and decided department (`nil`: unknown).
    public var confusion: [UInt16: [UInt16?: Int]] = [:]

    public init() {}

    public var scored: Int { right + wrong + unknown }
    public var rightShare: Double { scored == 0 ? 0 : Double(right) / Double(scored) }
    public var wrongShare: Double { scored == 0 ? 0 : Double(wrong) / Double(scored) }
    public var unknownShare: Double { scored == 0 ? 0 : Double(unknown) / Double(scored) }

    /// The `fraction` quantile of the switch latencies (nearest rank), in milliseconds.
    public func switchLatency(quantile fraction: Double) -> Int64? {
        guard !switchLatencies.isEmpty else { return nil }
        let sorted = switchLatencies.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    /// Scores `decisions` of the person with `beacon` against `truth`.
    public static func score(_ decisions: DecisionTimeline, beacon: BeaconKey, truth: GroundTruth) -> AccuracyScore {
        var score = AccuracyScore()
        score.changes = decisions.departmentChanges
        guard let spans = truth.spans[beacon], let first = spans.first else { return score }
        var second = first.from
        let end = spans.last!.to
        while second + 500 <= end {
            let middle = second + 500
            if let actual = truth.department(of: beacon, at: middle) {
                let decided = decisions.department(at: middle)
                if decided == actual {
                    score.right += 1
                } else if decided == nil {
                    score.unknown += 1
                } else {
                    score.wrong += 1
                }
                score.confusion[actual, default: [:]][decided, default: 0] += 1
            }
            second += 1000
        }
        let changes = truth.changes(of: beacon)
        score.trueChanges = changes.count
        for (index, change) in changes.enumerated() {
            let until = index + 1 < changes.count ? changes[index + 1].at : end
            if let followed = decisions.changes.first(where: { $0.at >= change.at && $0.at < until && $0.department == change.to }) {
                score.switchLatencies.append(followed.at - change.at)
            } else if decisions.department(at: change.at) == change.to {
                score.switchLatencies.append(0)
            } else {
                score.missedChanges += 1
            }
        }
        return score
    }

    /// Two scores as one (a total over recordings or people).
    public static func + (left: AccuracyScore, right: AccuracyScore) -> AccuracyScore {
        var sum = left
        sum.right += right.right
        sum.wrong += right.wrong
        sum.unknown += right.unknown
        sum.changes += right.changes
        sum.trueChanges += right.trueChanges
        sum.switchLatencies += right.switchLatencies
        sum.missedChanges += right.missedChanges
        for (actual, row) in right.confusion {
            for (decided, seconds) in row { sum.confusion[actual, default: [:]][decided, default: 0] += seconds }
        }
        return sum
    }
}
