extension PresenceEngine {
    /// Counters of what the engine applied and refused.
    public struct Counters: Hashable, Sendable {
        public var batches: UInt64 = 0
        public var sightings: UInt64 = 0
        public var duplicates: UInt64 = 0
        public var late: UInt64 = 0
        /// Sequence numbers skipped and not (yet) arrived: a late batch or report that fills one takes it back.
        public var gaps: UInt64 = 0
        public var fromOfflineNodes: UInt64 = 0
        /// Ranging reports applied (their ranged beacons count as sightings).
        public var rangingReports: UInt64 = 0
        public init() {}
    }
}

extension PresenceEngine.Counters {
    /// Counts what a node's batch or a phone's report was to its sender's order: a duplicate, a late one (which takes
    /// back the gap it fills), or one whose newer number skipped some (each a gap until it arrives).
    mutating func count(_ order: SequenceTrack.Verdict) {
        switch order {
        case .duplicate:
            duplicates += 1
        case .late(let filledGap):
            if filledGap { gaps -= 1 }
            late += 1
        case .next(let skipped, _):
            gaps += skipped
        case .newEpoch:
            break
        }
    }
}
