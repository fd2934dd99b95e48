import BeaconMeshCore

/// A member as the registry keeps them: the profile events show, their beacons and when they joined, and their
/// Eddystone-EID fob if they have one (whose handle is among `beacons` as the registry reads them).
public struct MemberRecord: Sendable, Equatable {
    public var profile: MemberProfile
    public var beacons: [BeaconKey]
    public var createdAt: Timestamp?
    /// Written only when given: a record without one (a CSV row, `members add` without `--eid`) keeps the stored fob.
    public var fob: MemberFob?

    public init(profile: MemberProfile, beacons: [BeaconKey], createdAt: Timestamp?, fob: MemberFob? = nil) {
        self.profile = profile
        self.beacons = beacons
        self.createdAt = createdAt
        self.fob = fob
    }

    /// The beacons a person would list: `beacons` without the fob's handle (an export, `members list`).
    public var listedBeacons: [BeaconKey] { beacons.filter { $0 != fob?.key } }

    /// This record as `merge` stores it over `existing`: the fob given, or else the one stored, with its handle among
    /// the beacons (once).
    public func keepingFob(of existing: MemberRecord?) -> MemberRecord {
        var merged = self
        merged.fob = fob ?? existing?.fob
        if let stale = existing?.fob?.key, stale != merged.fob?.key { merged.beacons.removeAll { $0 == stale } }
        if let key = merged.fob?.key, !merged.beacons.contains(key) { merged.beacons.append(key) }
        return merged
    }

    public var id: String { profile.id }
}
