import BeaconMeshCore

/// The registry as a coordinator reads it: what it works from at its start and at a take-over, the changes others
/// made (its poll and change feed), and the registry events it is to publish (see `MemberRegistry`).
public protocol RegistryReading: MemberLookup {
    /// What the coordinator works from: profiles, beacon owners and promo history, read together.
    func contents() throws -> RegistryContents

    /// The open (or recently left) visits saved for `stores` (all if `nil`).
    func loadVisits(stores: Set<UInt16>?) throws -> [PresenceEngine.Visit]

    /// The visits the history keeps as still going on, for `stores` (all if `nil`): what a restarted coordinator
    /// goes on with, so that each visit is kept once.
    func openHistory(stores: Set<UInt16>?) throws -> [VisitRecord]

    /// When each promo last fired for each member: `[member: [promo: time]]`.
    func promoFires() throws -> [String: [String: Timestamp]]

    /// The ids of the check-in requests handled since `time`.
    func checkinRequests(since time: Timestamp) throws -> Set<String>

    /// Registry events waiting to be published, oldest first: those not yet claimed are claimed for `coordinator`
    /// (so that coordinators sharing a registry publish each once), and those it claimed before are returned again.
    func claimRegistryEvents(for coordinator: String) throws -> [PendingRegistryEvent]

    /// Watches the registry for changes made elsewhere (another coordinator, the `members` command).
    func changeFeed() throws -> any RegistryChangeFeed
}

extension RegistryReading {
    /// Which member owns which beacon.
    public func beaconOwners() throws -> [BeaconKey: String] { try contents().beaconOwners }

    /// The open (or recently left) visits saved for any store.
    public func loadVisits() throws -> [PresenceEngine.Visit] { try loadVisits(stores: nil) }
}
