import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry

/// What the coordinator's decisions ask its shell to do, in the order they were decided: publish these messages,
/// make and publish these snapshots, write these registry changes, publish this health report.
///
/// The decisions (`CoordinatorState`) never publish, write or read anything themselves; `CoordinatorService`
/// performs their actions outside any lock.
struct CoordinatorActions: Sendable {
    /// Messages to publish, in this order (events of a store leave in the order they happened).
    var publications: [Publication] = []
    /// Presence snapshots that are due: make, encode and publish each (retained) on `Topics.presence(store:)`.
    var snapshots: [SnapshotSource] = []
    /// What the registry database must get (hand to `RegistryWriter.enqueue`).
    var registry = RegistryChanges()
    /// The health report that is due, without the process's memory figure (the shell measures it: `rssBytes`).
    var health: CoordinatorHealth?

    /// Whether there is nothing to do.
    var isEmpty: Bool { publications.isEmpty && snapshots.isEmpty && registry.isEmpty && health == nil }
}

/// One message the coordinator wants published.
struct Publication: Sendable {
    var topic: String
    var payload: [UInt8]
    var qos: MQTTQoS
    var retain: Bool
}
