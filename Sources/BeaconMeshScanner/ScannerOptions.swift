import ArgumentParser
import BeaconMeshCore
import BeaconMeshService
import Logging

/// The scanner's settings as typed values: the command line's flags, and the config file's keys (the same names in
/// camelCase, `ScannerOptions.configFields`) fill this one struct.
///
/// Every setting is optional here — `nil` (or empty, or an unset flag) means "not given", so that the config file
/// can fill what the command line left out. The defaults live in one place, `ScannerConfiguration` and the Core
/// types it holds; `ScannerSettings` merges and checks.
public struct ScannerOptions: ParsableArguments, Sendable {
    static let defaults = ScannerConfiguration(
        node: NodeAddress(store: 0, department: 0, node: "a")!, broker: BrokerConnection(url: BrokerConnection.defaultURL))

    @Option(help: ArgumentHelp("A YAML file holding any of these settings.", valueName: "FILE"))
    public var config: String?

    @Option(help: ArgumentHelp("Store number (0-65535): the iBeacon major of this store.", valueName: "N"))
    public var store: UInt16?

    @Option(help: ArgumentHelp("Department number (0-65535): the iBeacon minor of this department.", valueName: "N"))
    public var department: UInt16?

    @Option(
        help: ArgumentHelp(
            "Node id within the department: 1-32 of a-z, 0-9, - (default \(ScannerSettings.defaultNode)).", valueName: "ID"))
    public var node: NodeName?

    @OptionGroup public var brokerOptions: BrokerOptions

    @Option(
        help: ArgumentHelp(
            "Where to hear adverts: hci0 (any hciN; the default), btsnoop:PATH or sim.", valueName: "SOURCE"))
    public var source: AdvertSource?

    @Option(
        help: ArgumentHelp(
            "Replay pace for btsnoop: sources: a factor (1 = recorded pace, the default) or max.", valueName: "X|max"))
    public var speed: ReplaySpeed?

    @Option(
        name: .customLong("uuid"),
        help: ArgumentHelp(
            "Only report iBeacons with this UUID (repeatable; default: all). The first is also the one --advertise sends.",
            valueName: "UUID"))
    public var uuids: [BeaconUUID] = []

    @Option(
        help: ArgumentHelp(
            "Flush window: how long adverts are collected into one batch (default \(format(defaults.aggregation.flushInterval))).",
            valueName: "DURATION"))
    public var flush: PositiveDuration?

    @Option(
        help: ArgumentHelp(
            "A beacon not heard for this long is reported as lost (default \(format(defaults.aggregation.lostAfter))).",
            valueName: "DURATION"))
    public var lostAfter: PositiveDuration?

    @Option(
        help: ArgumentHelp(
            "Ignore adverts weaker than this (dBm, default \(defaults.aggregation.minimumRSSI)).", valueName: "DBM"))
    public var minRssi: Int8?

    @Option(
        help: ArgumentHelp(
            "QoS of sighting batches: 1 (at least once; the default) or 0.", valueName: "0|1"))
    public var qos: SightingsQoS?

    @Option(
        help: ArgumentHelp(
            "Batches kept while the broker is unreachable; the oldest are dropped beyond (default \(defaults.queueCapacity)).",
            valueName: "N"))
    public var queueSize: Int?

    @Flag(help: "Also report each beacon's advertiser address, strongest reading and first-seen time.")
    public var details = false

    @Flag(help: "Also broadcast this department's iBeacon (UUID, major = store, minor = department).")
    public var advertise = false

    @Option(
        help: ArgumentHelp(
            "Measured power at 1 m that --advertise announces (dBm, default \(defaults.advertisedMeasuredPower)).",
            valueName: "DBM"))
    public var measuredPower: Int8?

    @Option(
        help: ArgumentHelp(
            "Write what the radio hears to a btsnoop file (opens in btmon -r and Wireshark).", valueName: "PATH"))
    public var record: String?

    @Option(
        help: ArgumentHelp(
            "LE scan interval (default \(format(ScannerSettings.defaultScanInterval))).", valueName: "DURATION"))
    public var scanInterval: PositiveDuration?

    @Option(help: ArgumentHelp("LE scan window, at most the interval (default: the interval).", valueName: "DURATION"))
    public var scanWindow: PositiveDuration?

    @Flag(help: "Scan actively (ask for scan responses) instead of passively.")
    public var activeScan = false

    @Option(
        help: ArgumentHelp(
            "Path-loss exponent of the distance model (2 in free space, 2.5-4 indoors; default \(decimal(defaults.aggregation.distanceModel.pathLossExponent))).",
            valueName: "N"))
    public var pathLossExponent: Double?

    @Option(help: ArgumentHelp("Added to every reading of this node to calibrate its antenna (dB).", valueName: "DB"))
    public var rssiAdjustment: Double?

    @Option(
        help: ArgumentHelp(
            "Closer than this is immediate (metres, default \(decimal(defaults.aggregation.distanceModel.immediateBelow))).",
            valueName: "M"))
    public var immediateBelow: Double?

    @Option(
        help: ArgumentHelp(
            "Closer than this is near, farther is far (metres, default \(decimal(defaults.aggregation.distanceModel.nearBelow))).",
            valueName: "M"))
    public var nearBelow: Double?

    @Option(
        help: ArgumentHelp(
            "Measured power at 1 m for beacons whose frames carry none (dBm, default \(defaults.aggregation.distanceModel.defaultMeasuredPower ?? -59)).",
            valueName: "DBM"))
    public var defaultTxPower: Int8?

    @Option(
        help: ArgumentHelp(
            "Departments the simulated shoppers walk through, in order (sim only).", valueName: "10,20,30"))
    public var simRoute: DepartmentRoute?

    @Option(
        help: ArgumentHelp(
            "How long simulated shoppers stay away between walks (sim only; default \(format(defaults.simulationOutside)), 0s: never leave).",
            valueName: "DURATION"))
    public var simOutside: NonNegativeDuration?

    @Option(
        help: ArgumentHelp(
            "Log level: trace, debug, info (default), notice, warning, error or critical.", valueName: "LEVEL"))
    public var logLevel: Logger.Level?

    /// How often the node publishes its health (config file only: `healthInterval`).
    @Option(help: ArgumentHelp(visibility: .private))
    public var healthInterval: PositiveDuration?

    /// The first level of every topic (config file only: `topicRoot`).
    @Option(help: ArgumentHelp(visibility: .private))
    public var topicRoot: String?

    public init() {}

    /// `500ms`, `10s`, `60s`: how the help shows a default.
    private static func format(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }

    /// `2.0` → `2`, `0.5` → `0.5`.
    private static func decimal(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
