/// Whether a node or coordinator is up, as its retained status topic says.
public enum LinkState: String, Sendable, Hashable {
    case online
    case offline
}

/// A scanner node's retained status: the contract's node status payload.
public struct NodeStatus: Hashable, Sendable {
    public var state: LinkState
    public var version: String
    public var boot: String
    /// Where the node hears beacons: `hci0`, `btsnoop:PATH` or `sim`.
    public var source: String
    public var startedAt: Timestamp
    /// What the node did with the node configs from head office it has received (`config.store`, `config.node`).
    public var config: NodeConfigReports

    public init(
        state: LinkState, version: String, boot: String, source: String, startedAt: Timestamp,
        config: NodeConfigReports = NodeConfigReports()
    ) {
        self.state = state
        self.version = version
        self.boot = boot
        self.source = source
        self.startedAt = startedAt
        self.config = config
    }
}

/// A scanner node's periodic health report: the contract's node health payload.
public struct NodeHealth: Hashable, Sendable {
    public var uptimeSeconds: Int64
    public var adverts: UInt64
    public var advertsPerSecond: Double
    public var beacons: Int
    public var batches: UInt64
    public var dropped: UInt64
    public var queued: Int
    public var rssBytes: Int
    /// Beacon frames of a known kind with the wrong length, dropped (`malformed`; 0 from scanners before it).
    public var malformedFrames: UInt64

    public init(
        uptimeSeconds: Int64, adverts: UInt64, advertsPerSecond: Double, beacons: Int, batches: UInt64,
        dropped: UInt64, queued: Int, rssBytes: Int, malformedFrames: UInt64 = 0
    ) {
        self.malformedFrames = malformedFrames
        self.uptimeSeconds = uptimeSeconds
        self.adverts = adverts
        self.advertsPerSecond = advertsPerSecond
        self.beacons = beacons
        self.batches = batches
        self.dropped = dropped
        self.queued = queued
        self.rssBytes = rssBytes
    }
}
