@testable import BeaconMeshCore

extension PresenceRules {
    /// Rules with the given times in milliseconds and a 4 dB switch margin, for the randomised engine tests.
    static func testing(stale: Int64, exit: Int64, dwell: Int64, gap: Int64) -> PresenceRules {
        var rules = PresenceRules()
        rules.staleAfter = .milliseconds(stale)
        rules.exitAfter = .milliseconds(exit)
        rules.switchMargin = 4
        rules.switchDwell = .milliseconds(dwell)
        rules.visitGap = .milliseconds(gap)
        return rules
    }
}
