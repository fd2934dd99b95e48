/// One member visit as the registry's history keeps it: the store, arrival and departure, the departments in the
/// order the member was decided to be in them with the time spent in each, the promos offered and the check-ins
/// made during the visit.
///
/// A visit is identified by member, store and arrival (`key`): writing the same visit again (after a resumption, a
/// restart or a retried write) replaces it, so each visit is kept once. `leftAt` is `nil` while the visit goes on;
/// analytics count only finished visits.
public struct VisitRecord: Hashable, Sendable {
    /// What identifies a visit in the history.
    public struct Key: Hashable, Sendable {
        public var member: String
        public var store: UInt16
        public var arrivedAt: Timestamp

        public init(member: String, store: UInt16, arrivedAt: Timestamp) {
            self.member = member
            self.store = store
            self.arrivedAt = arrivedAt
        }
    }

    /// A stay in one department: entered at `enteredAt`, for `dwell` (until the next stop, or the last reading).
    public struct Stop: Hashable, Sendable {
        public var department: UInt16
        /// The department's name from the config, so that a report needs no config.
        public var name: String
        public var enteredAt: Timestamp
        public var dwell: Duration

        public init(department: UInt16, name: String, enteredAt: Timestamp, dwell: Duration = .zero) {
            self.department = department
            self.name = name
            self.enteredAt = enteredAt
            self.dwell = dwell
        }
    }

    /// A promo offered during the visit.
    public struct Offer: Hashable, Sendable {
        public var promo: String
        public var department: UInt16
        public var at: Timestamp

        public init(promo: String, department: UInt16, at: Timestamp) {
            self.promo = promo
            self.department = department
            self.at = at
        }
    }

    /// A check-in accepted at a till during the visit.
    public struct Checkin: Hashable, Sendable {
        public var department: UInt16
        public var at: Timestamp

        public init(department: UInt16, at: Timestamp) {
            self.department = department
            self.at = at
        }
    }

    public var member: String
    public var store: UInt16
    public var arrivedAt: Timestamp
    /// The member's last reading of the visit; `nil` while the visit goes on.
    public var leftAt: Timestamp?
    /// The member's visit number (chain-wide with a shared registry): 1 is their first visit ever.
    public var number: Int
    public var stops: [Stop]
    public var offers: [Offer]
    public var checkins: [Checkin]

    public init(
        member: String, store: UInt16, arrivedAt: Timestamp, leftAt: Timestamp? = nil, number: Int, stops: [Stop] = [],
        offers: [Offer] = [], checkins: [Checkin] = []
    ) {
        self.member = member
        self.store = store
        self.arrivedAt = arrivedAt
        self.leftAt = leftAt
        self.number = number
        self.stops = stops
        self.offers = offers
        self.checkins = checkins
    }

    public var key: Key { Key(member: member, store: store, arrivedAt: arrivedAt) }
}
