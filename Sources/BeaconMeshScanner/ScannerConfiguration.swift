import BeaconMeshCore
import BeaconMeshService

/// Everything a scanner node runs with: where it is, where it listens, where it publishes, and how it batches.
public struct ScannerConfiguration: Sendable {
    /// Store, department and node id: the node's place in the topic tree.
    public var node: NodeAddress
    public var broker: BrokerConnection
    public var source: AdvertSource = .adapter(index: 0)
    /// Replay pace for `btsnoop:` sources.
    public var speed: ReplaySpeed = .factor(1)
    /// QoS of sighting batches: 1 (default, delivered at least once) or 0.
    public var sightingsQoS = 1
    public var aggregation = SightingAggregator.Configuration()
    /// Batches kept while the broker is unreachable; the oldest are dropped beyond this.
    public var queueCapacity = 10_000
    public var healthInterval: Duration = .seconds(30)
    /// The first level of every topic.
    public var topicRoot = "beaconmesh"
    /// Departments the simulated shoppers walk through (for `sim`).
    public var simulationRoute: [UInt16] = []
    /// This build's version, as the node status reports it.
    public var version = BeaconMeshVersion.current

    public init(node: NodeAddress, broker: BrokerConnection) {
        self.node = node
        self.broker = broker
    }
}
