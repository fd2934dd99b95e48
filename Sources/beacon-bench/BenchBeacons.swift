import BeaconMeshCore

/// The beacons every benchmark hears: iBeacons of one UUID, told apart by major and minor.
enum BenchBeacons {
    static let uuidText = "0cf052c2-97ca-407c-84f8-b62aac4e9020"
    static let uuid = BeaconUUID(uuidText)!
}
