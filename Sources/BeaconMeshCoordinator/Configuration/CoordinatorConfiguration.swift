import BeaconMeshCore
import BeaconMeshService
import Foundation

/// Everything a coordinator needs to run: the contract's coordinator config, with a default for every field.
public struct CoordinatorConfiguration: Sendable, Equatable {
    /// MQTT client id and the `coordinators/{id}/…` topics; defaults to the host name.
    public var id: String
    public var broker = Broker()
    /// The registry (members, visits, promo history): a SQLite file, or a chain's PostgreSQL database as
    /// `postgres://USER@HOST:PORT/DB[?sslmode=require]`.
    public var database = "beaconmesh.sqlite"
    /// A file holding the PostgreSQL password (else `BEACONMESH_DB_PASSWORD`; never the password in the config).
    public var databasePasswordFile: String?
    /// A file of 32 random bytes under which members' Eddystone-EID fob keys are sealed in the registry (`SecretsKey`):
    /// needed once any member has a fob.
    public var secretsKeyFile: String?
    /// Store-wide presence timing; departments may override any of it.
    public var presence = PresenceRules()
    public var promos = PromoDefaults()
    public var stores: [Store] = []
    /// A members CSV merged into the database at start (for demos and tests).
    public var members: String?
    /// The first level of every topic (`beaconmesh` in `beaconmesh/v1/...`).
    public var topicRoot = Topics.defaultRoot
    /// Where to serve Prometheus metrics at `/metrics` (`HOST:PORT`); none when absent.
    public var metrics: ListenAddress?
    /// How the stores' leases work with a shared PostgreSQL registry (`lease:`).
    public var lease = Lease()
    /// How long history is kept (`retention:`).
    public var retention = Retention()
    /// With a shared PostgreSQL registry, the file where the coordinator keeps what it needs to start and decide its
    /// stores while the database cannot be reached (`cache:`; `load` makes the default `{id}.cache` beside the config
    /// file). `nil`: none (a SQLite registry is local already).
    public var cache: String?
    /// `alerts:`: the rules that tell staff (the stores' `alerts` topics).
    public var alerts: [AlertRule] = []
    /// `webhooks:`: where events and alerts are POSTed, signed (`WebhookCourier`).
    public var webhooks: [WebhookEndpoint] = []

    public init(id: String) {
        self.id = id
    }

    /// How to reach the broker.
    public struct Broker: Sendable, Equatable {
        public var url = BrokerConnection.defaultURL
        public var username: String?
        /// A file holding the password (never the password itself in the config).
        public var passwordFile: String?
        /// CA certificate for `mqtts://` (the system trust store when absent).
        public var cafile: String?
        public init() {}
    }

    /// The stores' leases (`lease: {ttl: 10s}`): with a shared PostgreSQL registry several coordinators may list a
    /// store, and the one holding its lease decides for it.
    public struct Lease: Sendable, Equatable {
        /// How long a store's lease lasts unrenewed: a standby takes a store over within about this after its
        /// coordinator died or lost the database.
        public var ttl: Duration = .seconds(10)
        public init() {}
    }

    /// Whether the registry is a shared PostgreSQL database (leases, several coordinators) rather than a SQLite file.
    public var sharesRegistry: Bool { database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") }

    /// How long the registry keeps history: member visits older than `visits` are deleted (at start and hourly);
    /// guest counts carry no identity and are kept.
    public struct Retention: Sendable, Hashable {
        /// How long a member's visit history is kept (default 365 days).
        public var visits: Duration = .seconds(365 * 24 * 3600)
        public init() {}
    }

    /// When promos fire unless a promo says otherwise.
    public struct PromoDefaults: Sendable, Equatable {
        /// How long a member must stay in the department first.
        public var dwell: Duration = .seconds(3)
        /// A promo fires at most once per member within this time.
        public var cooldown: Duration = .seconds(24 * 3600)
        public init() {}
    }

    /// One store this coordinator serves.
    public struct Store: Sendable, Equatable {
        public var id: UInt16
        public var name: String
        public var greeting: GreetingTemplate = .standard
        /// The greeting of a member's first visit (`nil`: `greeting`).
        public var firstVisitGreeting: GreetingTemplate?
        public var departments: [Department] = []
        /// The store's local time for promo hours and alerts' quiet hours (`timeZone:`, an IANA name; `nil`: the
        /// coordinator's).
        public var timeZone: TimeZone?
        /// Fixed beacons placed in the store's departments (`references:`): never members, guests or visits; their
        /// readings are trusted survey samples of their department.
        public var references: [Reference] = []

        public init(id: UInt16, name: String) {
            self.id = id
            self.name = name
        }

        /// The local day and minute of `time` in this store.
        public func localDayAndMinute(of time: Timestamp) -> (PromoWindow.Day, Int) {
            LocalCalendar.dayAndMinute(of: time, in: timeZone ?? .current)
        }

        /// The greeting of a member's `visit`-th visit.
        public func greeting(forVisit visit: Int) -> GreetingTemplate {
            visit == 1 ? firstVisitGreeting ?? greeting : greeting
        }

        /// The reference placed as `beacon`, if the store has one.
        public func reference(_ beacon: BeaconKey) -> Reference? { references.first { $0.beacon == beacon } }

        /// The department with `id`, if the store has one.
        public func department(_ id: UInt16) -> Department? { departments.first { $0.id == id } }
    }

    /// One department of a store.
    public struct Department: Sendable, Equatable {
        public var id: UInt16
        public var name: String
        public var promo: PromoRule?
        /// This department's presence rules (the store-wide ones with its overrides applied).
        public var presence: PresenceRules
        /// A till: check-ins are accepted here (`till: true`).
        public var till: Bool
        /// Readings of this department weaker than this (dBm, `minRssi`) do not count: a node that hears through a
        /// wall or a floor. `nil`: every reading counts.
        public var minRSSI: Double?
        /// The departments of the same store one can walk to from this one directly (`neighbours`); `nil`: every
        /// department.
        public var neighbours: Set<UInt16>?

        public init(
            id: UInt16, name: String, promo: PromoRule? = nil, presence: PresenceRules, till: Bool = false,
            minRSSI: Double? = nil, neighbours: Set<UInt16>? = nil
        ) {
            self.till = till
            self.id = id
            self.name = name
            self.promo = promo
            self.presence = presence
            self.minRSSI = minRSSI
            self.neighbours = neighbours
        }

        /// The department as the presence engine takes it.
        public var layout: DepartmentLayout {
            DepartmentLayout(id: id, rules: presence, minRSSI: minRSSI, neighbours: neighbours)
        }
    }

    /// A department's promo and when it may fire.
    public struct PromoRule: Sendable, Equatable {
        public var promo: Promo
        /// The farthest proximity that counts.
        public var proximity: Proximity = .near
        /// Overrides the default dwell.
        public var dwell: Duration?
        /// The dates and daily hours it may fire in (local time).
        public var window = PromoWindow()
        /// Who it is for.
        public var audience = PromoAudience()

        public init(promo: Promo) {
            self.promo = promo
        }
    }

    /// The stores' ids, in config order.
    public var storeIDs: [UInt16] { stores.map(\.id) }

    /// The store with `id`, if served here.
    public func store(_ id: UInt16) -> Store? { stores.first { $0.id == id } }
}

extension CoordinatorConfiguration {
    /// A fixed beacon placed in a department of a store (`references: [{beacon: KEY, department: D}]`).
    public struct Reference: Sendable, Equatable {
        public var beacon: BeaconKey
        public var department: UInt16
        /// The config file's line that lists it (for errors found after loading), if known.
        public var line: Int?

        public init(beacon: BeaconKey, department: UInt16, line: Int? = nil) {
            self.beacon = beacon
            self.department = department
            self.line = line
        }
    }
}
