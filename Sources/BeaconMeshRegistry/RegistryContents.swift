import BeaconMeshCore

/// What the coordinator works from, as the registry holds it: profiles, who owns which beacon, promo history.
public struct RegistryContents: Sendable {
    public var profiles: [String: MemberProfile]
    public var beaconOwners: [BeaconKey: String]
    public var promoFires: [String: [String: Timestamp]]
    /// The members' Eddystone-EID fobs (their handles are among `beaconOwners`), by member.
    public var fobs: [String: MemberFob]

    public init(
        profiles: [String: MemberProfile], beaconOwners: [BeaconKey: String], promoFires: [String: [String: Timestamp]],
        fobs: [String: MemberFob] = [:]
    ) {
        self.profiles = profiles
        self.beaconOwners = beaconOwners
        self.promoFires = promoFires
        self.fobs = fobs
    }

    /// What changed from `earlier` to these contents, member by member: profiles and beacons of members added or
    /// changed, members gone, promo histories changed. One pass over both, so that a whole read of the registry
    /// (SQLite tells only that something changed) hands the decisions only what differs.
    public func changes(since earlier: RegistryContents) -> MemberChanges {
        var changed = Set<String>()
        for (id, profile) in profiles where earlier.profiles[id] != profile { changed.insert(id) }
        for (beacon, owner) in beaconOwners {
            let former = earlier.beaconOwners[beacon]
            guard former != owner else { continue }
            changed.insert(owner)
            if let former { changed.insert(former) }
        }
        for (beacon, former) in earlier.beaconOwners where beaconOwners[beacon] == nil { changed.insert(former) }
        let removed = Set(earlier.profiles.keys.filter { profiles[$0] == nil })
        changed.subtract(removed)
        var beacons: [String: [BeaconKey]] = [:]
        if !changed.isEmpty {
            for (beacon, owner) in beaconOwners where changed.contains(owner) { beacons[owner, default: []].append(beacon) }
        }
        let records = changed.compactMap { id in
            profiles[id].map { MemberRecord(profile: $0, beacons: beacons[id] ?? [], createdAt: nil) }
        }
        var fires: [String: [String: Timestamp]] = [:]
        for (member, promos) in promoFires where earlier.promoFires[member] != promos { fires[member] = promos }
        return MemberChanges(records: records, removed: removed, promoFires: fires)
    }

    /// Takes `changes` in at their cost alone, for comparing a later whole read (`changes(since:)`): profiles, promo
    /// histories and members gone are kept exact; a beacon a changed member no longer lists stays theirs here (finding
    /// it would take a pass over every beacon), which makes a later comparison hand that member over once more, as
    /// they then are: never a wrong owner, at most a repeated one.
    public mutating func apply(_ changes: MemberChanges) {
        for id in changes.removed {
            profiles[id] = nil
            promoFires[id] = nil
            fobs[id] = nil
        }
        for (id, record) in changes.records {
            profiles[id] = record.profile
            if let fob = record.fob { fobs[id] = fob }
            for beacon in record.beacons { beaconOwners[beacon] = id }
        }
        for (member, promos) in changes.promoFires { promoFires[member] = promos }
    }
}
