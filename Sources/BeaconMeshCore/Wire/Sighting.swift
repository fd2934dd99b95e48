/// One beacon as one node heard it during one flush window: the contract's sighting inside a batch.
public struct Sighting: Hashable, Sendable {
    public var beacon: BeaconKey
    /// The node's smoothed RSSI (dBm).
    public var rssi: Double
    /// Raw advertisements behind `rssi` since the previous batch.
    public var count: Int
    /// Measured power at 1 m (from the frame or the calibrated default), if known.
    public var txPower: Int?
    /// Estimated distance in metres, if known.
    public var distance: Double?
    public var proximity: Proximity
    public var lastSeen: Timestamp
    /// Optional extras the contract allows.
    public var address: BluetoothAddress?
    public var rssiMax: Int?
    public var firstSeen: Timestamp?
    /// Eddystone-TLM battery voltage (mV) and temperature (°C), when the beacon sends telemetry.
    public var battery: Int?
    public var temperature: Double?

    public init(
        beacon: BeaconKey, rssi: Double, count: Int, txPower: Int?, distance: Double?, proximity: Proximity,
        lastSeen: Timestamp, address: BluetoothAddress? = nil, rssiMax: Int? = nil, firstSeen: Timestamp? = nil,
        battery: Int? = nil, temperature: Double? = nil
    ) {
        self.beacon = beacon
        self.rssi = rssi
        self.count = count
        self.txPower = txPower
        self.distance = distance
        self.proximity = proximity
        self.lastSeen = lastSeen
        self.address = address
        self.rssiMax = rssiMax
        self.firstSeen = firstSeen
        self.battery = battery
        self.temperature = temperature
    }
}

/// What one node sends per flush window: its sightings and the beacons it stopped hearing, numbered by `boot`/`seq`.
public struct SightingBatch: Hashable, Sendable {
    public var node: NodeAddress
    /// Random id drawn at each scanner start.
    public var boot: String
    /// 1 for the first batch of a boot, then +1 per batch.
    public var seq: UInt64
    public var sentAt: Timestamp
    public var sightings: [Sighting]
    /// Beacons this node stopped hearing since the previous batch.
    public var lost: [BeaconKey]

    public init(node: NodeAddress, boot: String, seq: UInt64, sentAt: Timestamp, sightings: [Sighting], lost: [BeaconKey] = []) {
        self.node = node
        self.boot = boot
        self.seq = seq
        self.sentAt = sentAt
        self.sightings = sightings
        self.lost = lost
    }
}
