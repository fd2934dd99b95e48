/// The contract's analytics object: what a store's history says about a period `[from, to)`. A visit belongs to the
/// period in which it started; only finished member visits count; durations are whole seconds.
public struct StoreAnalytics: Hashable, Sendable {
    /// Visits counted in the period.
    public struct Visits: Hashable, Sendable {
        /// Members who visited (each once).
        public var members: Int
        /// Members whose first visit ever is in the period.
        public var newMembers: Int
        /// The other members who visited.
        public var repeatMembers: Int
        /// Guest visits (counted only).
        public var guests: Int

        public init(members: Int = 0, newMembers: Int = 0, repeatMembers: Int = 0, guests: Int = 0) {
            self.members = members
            self.newMembers = newMembers
            self.repeatMembers = repeatMembers
            self.guests = guests
        }
    }

    /// A spread of durations in seconds (nearest-rank percentiles); `total` where the contract asks for it.
    public struct Dwell: Hashable, Sendable {
        public var median: Int
        public var p90: Int
        public var total: Int?

        public init(median: Int = 0, p90: Int = 0, total: Int? = nil) {
            self.median = median
            self.p90 = p90
            self.total = total
        }
    }

    /// Visits started in one hour (UTC, the hour's start in epoch milliseconds).
    public struct Hour: Hashable, Sendable {
        public var hour: Timestamp
        public var members: Int
        public var guests: Int

        public init(hour: Timestamp, members: Int, guests: Int) {
            self.hour = hour
            self.members = members
            self.guests = guests
        }
    }

    /// Member visits that spent time in a department, and how long they spent there.
    public struct Department: Hashable, Sendable {
        public var department: UInt16
        public var name: String
        public var visits: Int
        public var dwell: Dwell

        public init(department: UInt16, name: String, visits: Int, dwell: Dwell) {
            self.department = department
            self.name = name
            self.visits = visits
            self.dwell = dwell
        }
    }

    /// Moves of member visits from one department to another.
    public struct Flow: Hashable, Sendable {
        public var from: UInt16
        public var to: UInt16
        public var count: Int

        public init(from: UInt16, to: UInt16, count: Int) {
            self.from = from
            self.to = to
            self.count = count
        }
    }

    /// Check-ins made during the period's member visits.
    public struct Checkins: Hashable, Sendable {
        public var count: Int
        public var visitsWithCheckin: Int

        public init(count: Int = 0, visitsWithCheckin: Int = 0) {
            self.count = count
            self.visitsWithCheckin = visitsWithCheckin
        }
    }

    /// How often a promo was offered, and how many of those visits then checked in.
    public struct Promo: Hashable, Sendable {
        public var id: String
        public var department: UInt16
        public var offers: Int
        public var visitsWithCheckinAfter: Int

        public init(id: String, department: UInt16, offers: Int, visitsWithCheckinAfter: Int) {
            self.id = id
            self.department = department
            self.offers = offers
            self.visitsWithCheckinAfter = visitsWithCheckinAfter
        }
    }

    public var store: UInt16
    public var from: Timestamp
    public var to: Timestamp
    public var visits = Visits()
    /// The length of member visits.
    public var dwell = Dwell()
    /// Hours of the period that had any visit, in order.
    public var hourly: [Hour] = []
    /// By department number.
    public var departments: [Department] = []
    /// By count (largest first), then from and to.
    public var flows: [Flow] = []
    public var checkins = Checkins()
    /// By promo id.
    public var promos: [Promo] = []

    public init(store: UInt16, from: Timestamp, to: Timestamp) {
        self.store = store
        self.from = from
        self.to = to
    }
}
