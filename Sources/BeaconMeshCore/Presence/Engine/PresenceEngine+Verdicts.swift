extension PresenceEngine {
    /// What became of a batch.
    public enum BatchVerdict: Hashable, Sendable {
        case applied
        /// Same boot, a sequence number already seen (a QoS 1 redelivery).
        case duplicate
        /// Same boot, older than one already applied.
        case late
        /// The node is offline in this boot (its last will came first) and the batch is not newer than the last one
        /// applied; its readings do not count.
        case nodeOffline
        /// The store is not served here.
        case unknownStore
    }

    /// What became of a ranging report.
    public enum RangingVerdict: Hashable, Sendable {
        case applied
        /// Same session, a sequence number already seen.
        case duplicate
        /// Same session, older than one already applied.
        case late
        case unknownStore
        /// The registry knows no such member.
        case unknownMember
    }
}
