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
    /// The coordinator's retained status changed (the stores it decides for): publish it on the connection that holds
    /// the last will.
    var status: CoordinatorStatus?
    /// Stores whose lease is now held but which are not decided for yet: load what the registry holds of them
    /// (`CoordinatorState.TakeOver.read`) and hand it back (`CoordinatorState.tookOver`).
    var takeOvers: Set<UInt16> = []
    /// What the Prometheus series should now say (the shell records it: `CoordinatorMetrics.record`).
    var metrics = MetricsFigures()
    /// What the local cache should now hold (`configuration.cache`): write it, off the decisions.
    var cache: CoordinatorCacheContents?

    /// Whether there is nothing to do.
    var isEmpty: Bool {
        publications.isEmpty && snapshots.isEmpty && metrics.isEmpty && registry.isEmpty && health == nil && status == nil
            && takeOvers.isEmpty && cache == nil
    }
}

/// One message the coordinator wants published: its topic, how, and what it says as a value.
struct Publication: Sendable {
    /// What a publication says, as a value: the shell (`CoordinatorService`) encodes it with `WireCodec` as it
    /// publishes it, so the decisions never encode and their tests read values.
    enum Message: Hashable, Sendable {
        case event(StoreEvent)
        case alert(Alert)
        case offer(Offer)
        case snapshot(PresenceSnapshot)
        case health(CoordinatorHealth)
        /// Bytes the shell encoded itself (the retained status, which it keeps to say again at every reconnection).
        case encoded([UInt8])
    }

    var topic: String
    var message: Message
    var qos: MQTTQoS
    var retain: Bool
    /// The store it was decided for, if any: it is published only while the store's lease is held.
    var store: UInt16? = nil
    /// Published only once the registry changes decided with it are written: a promo's firing, a check-in. A
    /// coordinator killed before the write has offered nothing, and offers it after its restart; killed after, it
    /// knows it offered, and does not offer again.
    var afterWrite = false
}
