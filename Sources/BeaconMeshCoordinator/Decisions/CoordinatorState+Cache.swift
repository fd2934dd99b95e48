import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshWire

/// When the coordinator's local cache is due: at once after a lease is taken or lost or a member is forgotten (a cold
/// start must know which stores it decides, and nobody forgotten may stay in the file), soon after another change a
/// restart must know (members, visit counts, promo firings, check-ins, surveys), and now and then after visits moved on.
struct CacheSchedule: Sendable {
    /// A change a restart must know is in the cache within this.
    static let soon: Duration = .seconds(5)
    /// Visits that only moved on are in the cache within this (as they are in the registry: `DecisionTimings.visitSave`).
    static let routine: Duration = .seconds(30)

    private var lastSaved: Timestamp?
    private var nowPending = false
    private var soonPending = true
    private var routinePending = false

    /// Notes what `changes` (about to be written to the registry) change in the cache.
    mutating func changed(_ changes: RegistryChanges) {
        if !changes.counts.isEmpty || !changes.promoFires.isEmpty || !changes.checkins.isEmpty || !changes.checkinRequests.isEmpty {
            soonPending = true
        } else if !changes.visits.isEmpty {
            routinePending = true
        }
    }

    /// Notes a change a restart must know.
    mutating func changedSoon() { soonPending = true }

    /// Notes a change the file must hold at once (a lease, a forgotten member).
    mutating func changedNow() { nowPending = true }

    /// Whether the cache is due at `now`.
    func isDue(at now: Timestamp) -> Bool {
        guard let lastSaved, !nowPending else { return true }
        return (soonPending && now - lastSaved >= Self.soon) || (routinePending && now - lastSaved >= Self.routine)
    }

    /// The cache was handed out at `now`.
    mutating func saved(at now: Timestamp) {
        lastSaved = now
        nowPending = false
        soonPending = false
        routinePending = false
    }
}

/// What the local cache is made from, taken by the decisions (copies of their dictionaries), so that the document is
/// made, encoded and written outside them.
struct CoordinatorCacheContents: Sendable {
    var coordinator: String
    var database: String
    var savedAt: Timestamp
    var leases: [UInt16: LeaseGrant]
    var profiles: [String: MemberProfile]
    var beaconOwners: [BeaconKey: String]
    var promoFires: [String: [String: Timestamp]]
    var visits: [PresenceEngine.Visit]
    var handledCheckins: [String: Timestamp]
    var surveys: [UInt16: SurveyFit]

    /// The document written to the file.
    func document() -> CoordinatorCacheDocument {
        var beacons: [String: [BeaconKey]] = [:]
        for (beacon, owner) in beaconOwners { beacons[owner, default: []].append(beacon) }
        let members = profiles.values.sorted { $0.id < $1.id }.map { profile in
            CoordinatorCacheDocument.Member(
                profile: profile, beacons: (beacons[profile.id] ?? []).sorted { $0.description < $1.description },
                promoFires: promoFires[profile.id] ?? [:])
        }
        return CoordinatorCacheDocument(
            coordinator: coordinator, database: database, savedAt: savedAt, leases: leases, members: members, visits: visits,
            handledCheckins: handledCheckins, surveys: surveys)
    }
}

extension CoordinatorState {
    /// What the local cache should hold now: members and beacons (every store's: members roam), promo firings, the
    /// visits of the stores decided here, check-ins handled, survey fits, and the leases held.
    func cacheContents(at now: Timestamp) -> CoordinatorCacheContents {
        CoordinatorCacheContents(
            coordinator: configuration.id, database: configuration.database, savedAt: now,
            leases: Dictionary(
                uniqueKeysWithValues: active.map { store in
                    (store, LeaseGrant(since: activeSince[store] ?? startedAt, fenced: leases?.fenced.contains(store) ?? false))
                }),
            profiles: profiles, beaconOwners: engine.beaconOwners, promoFires: promoFires,
            visits: engine.visits.filter { active.contains($0.store) }, handledCheckins: handledCheckins, surveys: surveys)
    }
}

extension CoordinatorState.Start {
    /// What a state starts from when the database cannot be reached: the local cache `document`.
    init(cache document: CoordinatorCacheDocument) {
        var profiles: [String: MemberProfile] = [:]
        var owners: [BeaconKey: String] = [:]
        var fires: [String: [String: Timestamp]] = [:]
        for member in document.members {
            profiles[member.profile.id] = member.profile
            for beacon in member.beacons { owners[beacon] = member.profile.id }
            if !member.promoFires.isEmpty { fires[member.profile.id] = member.promoFires }
        }
        self.init(
            contents: RegistryContents(profiles: profiles, beaconOwners: owners, promoFires: fires), visits: document.visits,
            handledCheckins: Set(document.handledCheckins.keys), surveys: document.surveys, cachedLeases: document.leases)
    }
}
