/// A surveyed store as its coordinator sees it, for health and the presence snapshot: the fit in use and how well
/// live readings fit the survey lately.
public struct SurveyStatus: Hashable, Sendable {
    public var store: UInt16
    public var fittedAt: Timestamp
    /// The fit's accuracy as estimated when it was fitted.
    public var accuracy: Double
    /// How many live readings were checked against the survey since the fit was taken up, and the share of the
    /// recent ones that fit it.
    public var checks: Int
    public var share: Double
    /// Live readings stopped fitting the survey (a node moved, the store rebuilt): walk it again.
    public var stale: Bool
    /// The nodes whose readings of the store's references moved since the survey (`ReferenceDrift`).
    public var drift: [Drift] = []

    /// A node whose readings of a reference moved by `db` dB since the survey.
    public struct Drift: Hashable, Sendable {
        public var node: String
        public var department: UInt16
        public var db: Double

        public init(node: String, department: UInt16, db: Double) {
            self.node = node
            self.department = department
            self.db = db
        }
    }

    public init(
        store: UInt16, fittedAt: Timestamp, accuracy: Double, checks: Int, share: Double, stale: Bool, drift: [Drift] = []
    ) {
        self.drift = drift
        self.store = store
        self.fittedAt = fittedAt
        self.accuracy = accuracy
        self.checks = checks
        self.share = share
        self.stale = stale
    }

    /// In words, for health and the dashboard.
    public var message: String {
        let moved = drift.map {
            "node \($0.node) of department \($0.department) hears the references \(PresenceEngine.oneDecimal($0.db)) dB off"
        }
        return (moved.isEmpty ? "" : moved.joined(separator: "; ") + "; ") + fitMessage
    }

    private var fitMessage: String {
        stale
            ? "the survey of store \(store) no longer fits: walk it again"
            : checks < SurveyFitness.minimumChecks
                ? "the survey of store \(store) is in use; too few readings yet to tell how well it fits"
                : "the survey of store \(store) fits \(Int((share * 100).rounded())) % of recent readings"
    }
}
