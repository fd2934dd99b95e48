import BeaconMeshCore

/// A member as the registry keeps them: the profile events show, their beacons and when they joined.
public struct MemberRecord: Sendable, Equatable {
    public var profile: MemberProfile
    public var beacons: [BeaconKey]
    public var createdAt: Timestamp?

    public init(profile: MemberProfile, beacons: [BeaconKey], createdAt: Timestamp?) {
        self.profile = profile
        self.beacons = beacons
        self.createdAt = createdAt
    }

    public var id: String { profile.id }
}
