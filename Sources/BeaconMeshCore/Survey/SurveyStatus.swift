/// A surveyed store as its coordinator sees it, for health and the presence snapshot: the fit in use and how well
/// live readings fit the survey lately.
public struct SurveyStatus: Hashable, Sendable {
    public var store: UInt16
    public var fittedAt: Timestamp
    /// The fit's accuracy by leave-one-stretch-out when it was fitted.
    public var accuracy: Double
    /// How many live readings were checked against the survey since the fit was taken up, and the share of the
    /// recent ones that fit it.
    public var checks: Int
    public var share: Double
    /// Live readings stopped fitting the survey (a node moved, the store rebuilt): walk it again.
    public var stale: Bool

    public init(store: UInt16, fittedAt: Timestamp, accuracy: Double, checks: Int, share: Double, stale: Bool) {
        self.store = store
        self.fittedAt = fittedAt
        self.accuracy = accuracy
        self.checks = checks
        self.share = share
        self.stale = stale
    }

    /// In words, for health and the dashboard.
    public var message: String {
        stale
            ? "the survey of store \(store) no longer fits: walk it again"
            : checks < SurveyFitness.minimumChecks
                ? "the survey of store \(store) is in use; too few readings yet to tell how well it fits"
                : "the survey of store \(store) fits \(Int((share * 100).rounded())) % of recent readings"
    }
}
