import BeaconMeshCore

/// What the coordinator works from, as the registry holds it: profiles, who owns which beacon, promo history.
public struct RegistryContents: Sendable {
    public var profiles: [String: MemberProfile]
    public var beaconOwners: [BeaconKey: String]
    public var promoFires: [String: [String: Timestamp]]

    public init(
        profiles: [String: MemberProfile], beaconOwners: [BeaconKey: String], promoFires: [String: [String: Timestamp]]
    ) {
        self.profiles = profiles
        self.beaconOwners = beaconOwners
        self.promoFires = promoFires
    }

    /// The contents with `records` replacing those members, and `gone` taken out (beacons and promo history too).
    public func updating(_ records: [MemberRecord], removing gone: Set<String>) -> RegistryContents {
        var next = self
        let touched = gone.union(records.map(\.id))
        guard !touched.isEmpty else { return next }
        next.beaconOwners = next.beaconOwners.filter { !touched.contains($0.value) }
        for id in gone {
            next.profiles[id] = nil
            next.promoFires[id] = nil
        }
        for record in records {
            next.profiles[record.id] = record.profile
            for beacon in record.beacons { next.beaconOwners[beacon] = record.id }
        }
        return next
    }
}
