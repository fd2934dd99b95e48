/// A coordinator's retained status: which stores it serves, which of them it decides for now, since when it runs.
public struct CoordinatorStatus: Hashable, Sendable {
    public var state: LinkState
    /// The stores in its config.
    public var stores: [UInt16]
    /// The stores it decides for now (it holds their lease); it stands by for the others.
    public var active: [UInt16]
    public var startedAt: Timestamp

    /// A status; `active` defaults to every store (a coordinator that holds all its stores' leases).
    public init(state: LinkState, stores: [UInt16], active: [UInt16]? = nil, startedAt: Timestamp) {
        self.state = state
        self.stores = stores
        self.active = active ?? stores
        self.startedAt = startedAt
    }
}

/// A coordinator's periodic health report: throughput and what it dropped, by reason.
public struct CoordinatorHealth: Hashable, Sendable {
    public var uptimeSeconds: Int64
    public var batches: UInt64
    /// Ranging reports of members' phones applied (their ranged beacons count in `sightings` too).
    public var rangingReports: UInt64
    public var sightings: UInt64
    public var events: UInt64
    public var dropped: [String: UInt64]
    public var gaps: UInt64
    public var duplicates: UInt64
    public var tracked: Int
    public var rssBytes: Int
    /// Every node heard, with its link state and its clock against the coordinator's.
    public var nodes: [Node]
    /// How the registry database is doing: writes wait in a queue while it cannot be written.
    public var database: Database
    /// The stores whose lease it holds, each with since when (by the database's clock), by store.
    public var leases: [Lease] = []

    /// The surveyed stores it decides, each with how well live readings fit the survey lately.
    public var surveys: [SurveyStatus] = []

    /// Each webhook endpoint's deliveries (none when the config has no `webhooks:`).
    public var webhooks: [Webhook] = []

    /// The chain's other coordinators whose `webhooks:` list is not this one's (a store one of them takes over from
    /// the other is then delivered to another list of endpoints), each with its endpoints' names; by id.
    public var webhookListsDiffer: [WebhookListDifference] = []

    /// Members' Eddystone-EID fobs resolved (`nil` when the coordinator resolves none: no `secretsKeyFile`).
    public var fobs: Fobs? = nil

    /// How the coordinator resolves members' Eddystone-EID fobs.
    public struct Fobs: Hashable, Sendable {
        /// Fobs it resolves.
        public var count: Int
        /// Sightings of Eddystone-EID ids that resolved to nobody since it started: another's fob, or a window too far
        /// from the fob's expected counter (a recording replayed). They count in occupancy, never as guest visits.
        public var unresolved: UInt64

        public init(count: Int, unresolved: UInt64) {
            self.count = count
            self.unresolved = unresolved
        }
    }

    /// Another coordinator whose `webhooks:` list differs from this one's.
    public struct WebhookListDifference: Hashable, Sendable {
        public var coordinator: String
        /// Its endpoints' names, in order.
        public var endpoints: [String]

        public init(coordinator: String, endpoints: [String]) {
            self.coordinator = coordinator
            self.endpoints = endpoints
        }
    }

    /// One webhook endpoint as its courier reports it: what it is owed, what became of the POSTs since the start, and
    /// since when and why it has been failing.
    public struct Webhook: Hashable, Sendable {
        public var name: String
        /// Deliveries waiting in the outbox for the stores this coordinator delivers for.
        public var backlog: Int
        public var delivered: UInt64 = 0
        /// Attempts that failed and will be tried again (a 5xx, 408, 429, a redirect, a timeout, no answer).
        public var failed: UInt64 = 0
        /// Deliveries the receiver refused for good (a 4xx other than 408 and 429): not tried again.
        public var refused: UInt64 = 0
        /// Deliveries given up after 24 hours of retries.
        public var expired: UInt64 = 0
        /// The last failure, while the endpoint is failing.
        public var error: String?
        public var failingSince: Timestamp?

        public init(name: String, backlog: Int) {
            self.name = name
            self.backlog = backlog
        }
    }

    /// One store's lease that the coordinator holds.
    public struct Lease: Hashable, Sendable {
        public var store: UInt16
        /// When the hold began.
        public var since: Timestamp
        /// How long it has been held, in whole seconds, when the report was made.
        public var heldSeconds: Int64

        public init(store: UInt16, since: Timestamp, heldSeconds: Int64) {
            self.store = store
            self.since = since
            self.heldSeconds = heldSeconds
        }
    }

    /// One node as the coordinator sees it.
    public struct Node: Hashable, Sendable {
        public var address: NodeAddress
        public var state: LinkState
        /// How far the node's clock is ahead of the coordinator's, in milliseconds (negative: behind), as estimated
        /// from its batches' `sentAt` and their arrival.
        public var clockSkew: Int64

        public init(address: NodeAddress, state: LinkState, clockSkew: Int64) {
            self.address = address
            self.state = state
            self.clockSkew = clockSkew
        }
    }

    /// The registry database's state: `ok`, or `failing` with the cause, since when, and the writes waiting.
    public struct Database: Hashable, Sendable {
        public var failing: Bool
        /// Writes waiting to be made (visits, counts, promo history), in order.
        public var queued: Int
        /// What is wrong, in words, while failing.
        public var error: String?
        /// Since when it has been failing.
        public var since: Timestamp?
        /// Survey samples given up since the start: more than two hours of them waited for the database.
        public var surveySamplesDropped: Int

        public init(
            failing: Bool = false, queued: Int = 0, error: String? = nil, since: Timestamp? = nil, surveySamplesDropped: Int = 0
        ) {
            self.failing = failing
            self.queued = queued
            self.error = error
            self.since = since
            self.surveySamplesDropped = surveySamplesDropped
        }
    }

    public init(
        uptimeSeconds: Int64, batches: UInt64, sightings: UInt64, events: UInt64, dropped: [String: UInt64],
        gaps: UInt64, duplicates: UInt64, tracked: Int, rssBytes: Int, nodes: [Node] = [], database: Database = Database(),
        rangingReports: UInt64 = 0, leases: [Lease] = [], surveys: [SurveyStatus] = [], webhooks: [Webhook] = [],
        webhookListsDiffer: [WebhookListDifference] = []
    ) {
        self.webhooks = webhooks
        self.webhookListsDiffer = webhookListsDiffer
        self.leases = leases
        self.surveys = surveys
        self.rangingReports = rangingReports
        self.nodes = nodes
        self.database = database
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
