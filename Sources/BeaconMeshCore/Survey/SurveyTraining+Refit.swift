/// A refit judged against the fit it would replace, on the truth gathered since that fit was made (survey marks,
/// references and check-ins the installed fit never learnt from): each sample decided by the refit with its stretch
/// held out, and by the installed fit as it is.
public struct RefitComparison: Hashable, Sendable {
    /// Seconds of samples newer than the installed fit.
    public var seconds: Int
    /// The share of them the refit decides right.
    public var refit: Double
    /// The share of them the installed fit decides right.
    public var installed: Double

    public init(seconds: Int, refit: Double, installed: Double) {
        self.seconds = seconds
        self.refit = refit
        self.installed = installed
    }

    /// A bad refit: it decides the new truth worse than the fit it would replace, and is not installed.
    public var isWorse: Bool { refit < installed }
}

extension SurveyTraining {
    /// How the refit compares with `installed` on the samples taken after `installed` was fitted; `nil` when there are
    /// fewer than `minimumSeconds` of them (nothing new to judge by: the refit learns the same truth, and is installed).
    public func compare(with installed: SurveyFit, at time: Timestamp) -> RefitComparison? {
        let newer = samples.indices.filter { samples[$0].at > installed.fittedAt }
        guard newer.count >= Self.minimumSeconds else { return nil }
        let decisions = heldOutDecisions(at: time)
        let refitRight = newer.count { decisions[$0] >= 0 && departments[decisions[$0]] == samples[$0].department }
        let installedRight = newer.count { index in
            let likeliest = installed.probabilities(samples[index].readings).max { ($0.value, $1.key) < ($1.value, $0.key) }
            return likeliest?.key == samples[index].department
        }
        return RefitComparison(
            seconds: newer.count, refit: Double(refitRight) / Double(newer.count),
            installed: Double(installedRight) / Double(newer.count))
    }
}
