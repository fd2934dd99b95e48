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
