import BeaconMeshCore

/// When samples taken every `interval` are due: on a grid from the first, so that a tick a little late does not drift
/// the samples apart; after a gap of two intervals or more, the grid starts again from then.
struct SamplingGrid: Sendable {
    let interval: Duration
    private var last: Timestamp?

    init(every interval: Duration) {
        self.interval = interval
    }

    /// Whether a sample is due at `now`; if so, it counts as taken.
    mutating func isDue(at now: Timestamp) -> Bool {
        if let last, now - last < interval { return false }
        last = last.map { now - $0 < interval * 2 ? $0 + interval : now } ?? now
        return true
    }
}
