/// A coordinator's retained status: which stores it serves, since when.
public struct CoordinatorStatus: Hashable, Sendable {
    public var state: LinkState
    public var stores: [UInt16]
    public var startedAt: Timestamp

    public init(state: LinkState, stores: [UInt16], startedAt: Timestamp) {
        self.state = state
        self.stores = stores
        self.startedAt = startedAt
    }
}

/// A coordinator's periodic health report: throughput and what it dropped, by reason.
public struct CoordinatorHealth: Hashable, Sendable {
    public var uptimeSeconds: Int64
    public var batches: UInt64
    public var sightings: UInt64
    public var events: UInt64
    public var dropped: [String: UInt64]
    public var gaps: UInt64
    public var duplicates: UInt64
    public var tracked: Int
    public var rssBytes: Int

    public init(
        uptimeSeconds: Int64, batches: UInt64, sightings: UInt64, events: UInt64, dropped: [String: UInt64],
        gaps: UInt64, duplicates: UInt64, tracked: Int, rssBytes: Int
    ) {
        self.uptimeSeconds = uptimeSeconds
        self.batches = batches
        self.sightings = sightings
        self.events = events
        self.dropped = dropped
        self.gaps = gaps
        self.duplicates = duplicates
        self.tracked = tracked
        self.rssBytes = rssBytes
    }
}
