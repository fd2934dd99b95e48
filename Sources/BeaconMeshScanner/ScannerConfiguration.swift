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
    public var topicRoot = Topics.defaultRoot
    /// Departments the simulated shoppers walk through (for `sim`).
    public var simulationRoute: [UInt16] = []
    /// How long each simulated shopper stays away between two walks through the store (for `sim`; 0s: never).
    public var simulationOutside: Duration = .seconds(60)
    /// Also broadcast this department's iBeacon (`advertisedUUID`, major = store, minor = department).
    public var advertise = false
    /// The `--uuid` filter in the order given (the first is advertised); empty: every UUID.
    public var uuidFilter: [BeaconUUID] = []
    /// The log level the node started with (`--log-level`; head office's node config may change it live).
    public var logLevel = "info"
    /// The UUID the node advertises: the first `--uuid`, else BeaconMesh's store UUID.
    public var advertisedUUID: BeaconUUID?
    /// The measured power at 1 m the advertisement announces (dBm).
    public var advertisedMeasuredPower: Int8 = -59
    /// Where to write what the radio hears as a btsnoop file.
    public var recordPath: String?
    /// LE scan interval, window, passive or active.
    public var scanSettings = ScanSettings()
    /// This build's version, as the node status reports it.
    public var version = BeaconMeshVersion.current

    /// BeaconMesh's store UUID, advertised when no `--uuid` is given.
    public static let defaultAdvertisedUUID = BeaconUUID(high: 0x0CF0_52C2_97CA_407C, low: 0x84F8_B62A_AC4E_9020)

    public init(node: NodeAddress, broker: BrokerConnection) {
        self.node = node
        self.broker = broker
    }
}
