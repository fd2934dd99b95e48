import BeaconMeshCore

/// What a coordinator keeps in its local cache file (the config's `cache:`) to start and decide its stores while the
/// chain's database cannot be reached: who the members are and which beacons are theirs, their promo firings, the
/// visits going on, the check-in requests handled, the stores' survey fits and the leases it held.
///
/// Only what deciding needs: no visit history, no guests. Written as one JSON document (`WireCodec.encode`), read
/// back by `WireCodec.decodeCoordinatorCache`.
public struct CoordinatorCacheDocument: Sendable, Equatable {
    /// The coordinator whose cache this is (a cache is never started from by another).
    public var coordinator: String
    /// The database it mirrors, as the config names it (a cache of another database is never started from).
    public var database: String
    /// When it was written.
    public var savedAt: Timestamp
    /// The leases the coordinator held when it was written, by store.
    public var leases: [UInt16: LeaseGrant]
    public var members: [Member]
    /// Visits going on (or recently left) in the coordinator's stores.
    public var visits: [PresenceEngine.Visit]
    /// Check-in requests handled, by id, with when.
    public var handledCheckins: [String: Timestamp]
    /// Survey fits by store.
    public var surveys: [UInt16: SurveyFit]
    /// Registry writes not yet made when it was written, each under the id it is written with (at most once).
    public var pendingWrites: [PendingWrite] = []

    /// A batch of registry writes, as its owner encodes it.
    public struct PendingWrite: Sendable, Equatable {
        public var id: String
        public var changes: JSONValue

        public init(id: String, changes: JSONValue) {
            self.id = id
            self.changes = changes
        }
    }

    /// A member: their profile, beacons, and promo firings (by promo id).
    public struct Member: Sendable, Equatable {
        public var profile: MemberProfile
        public var beacons: [BeaconKey]
        public var promoFires: [String: Timestamp]

        public init(profile: MemberProfile, beacons: [BeaconKey], promoFires: [String: Timestamp]) {
            self.profile = profile
            self.beacons = beacons
            self.promoFires = promoFires
        }
    }

    public init(
        coordinator: String, database: String, savedAt: Timestamp, leases: [UInt16: LeaseGrant], members: [Member],
        visits: [PresenceEngine.Visit], handledCheckins: [String: Timestamp], surveys: [UInt16: SurveyFit],
        pendingWrites: [PendingWrite] = []
    ) {
        self.pendingWrites = pendingWrites
        self.coordinator = coordinator
        self.database = database
        self.savedAt = savedAt
        self.leases = leases
        self.members = members
        self.visits = visits
        self.handledCheckins = handledCheckins
        self.surveys = surveys
    }
}
