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
}
