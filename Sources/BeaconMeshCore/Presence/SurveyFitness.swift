/// How well a surveyed store's live readings fit its survey lately: of the readings checked (one a
/// `interval` per store at most), the share that lay within what 99 % of the survey's own samples did. A store
/// whose nodes moved or whose shelves were rebuilt sounds different, and the share falls.
public struct SurveyFitness: Hashable, Sendable {
    /// How often a store's readings are checked at most, in milliseconds.
    public static let interval: Int64 = 200
    /// How many checks the share is taken over (an exponential average of about this many).
    public static let window = 300.0
    /// Checks needed before the share says anything.
    public static let minimumChecks = 100
    /// Below this share the survey no longer fits.
    public static let alarmShare = 0.5

    /// Readings checked since the fit was taken up.
    public private(set) var checks = 0
    /// The share of recent checks that fit.
    public private(set) var share = 1.0

    public init() {}

    /// Counts one check.
    public mutating func record(fits: Bool) {
        checks += 1
        let weight = 1 / min(Double(checks), Self.window)
        share += weight * ((fits ? 1 : 0) - share)
    }

    /// Whether the survey no longer fits: enough checks, and too few of them fit.
    public var isStale: Bool { checks >= Self.minimumChecks && share < Self.alarmShare }
}
