/// One of the coordinator's alert rules (the config's `alerts:`): what makes it fire, in which stores, how often at
/// most, and the local hours it keeps quiet.
public struct AlertRule: Hashable, Sendable {
    /// The stores a rule watches: every store the coordinator decides, or one.
    public enum Stores: Hashable, Sendable {
        case all
        case one(UInt16)

        public func contains(_ store: UInt16) -> Bool {
            switch self {
            case .all: true
            case .one(let only): only == store
            }
        }
    }

    /// What makes the rule fire.
    public enum Condition: Hashable, Sendable {
        /// A member whose custom fields hold all of `fields` arrives in the store, or in `department` (arriving
        /// there or moving into it during the visit).
        case memberArrived(fields: [String: String], department: UInt16?)
        /// A member has stayed in `department` longer than `over`.
        case dwell(department: UInt16, over: Duration)
        /// A node has been offline longer than `over`.
        case nodeOffline(over: Duration)
        /// Nobody has decided the store (its lease unheld) for longer than `over`.
        case storeUndecided(over: Duration)

        public var kind: Alert.Kind {
            switch self {
            case .memberArrived: .memberArrived
            case .dwell: .dwell
            case .nodeOffline: .nodeOffline
            case .storeUndecided: .storeUndecided
            }
        }
    }

    /// How often a rule may fire for one member, node or store: once per visit (for a node or a store: per spell
    /// offline or undecided), or at most once per `Duration`.
    public enum Cap: Hashable, Sendable {
        case oncePerVisit
        case oncePer(Duration)
    }

    public var id: String
    public var stores: Stores
    public var when: Condition
    public var cap: Cap
    /// Local hours in which the rule sends nothing; an alert due then is not sent, and not sent later.
    public var quiet: PromoWindow.Hours?

    public init(id: String, stores: Stores, when: Condition, cap: Cap = .oncePerVisit, quiet: PromoWindow.Hours? = nil) {
        self.id = id
        self.stores = stores
        self.when = when
        self.cap = cap
        self.quiet = quiet
    }
}
