import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshScanner
import BeaconMeshService
import Logging
import ServiceLifecycle

/// `beacon-scanner`: one department's node — hears beacons and publishes sighting batches.
@main
struct BeaconScanner: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-scanner",
        abstract: "Listen to Bluetooth LE beacons in one department and publish batched sightings to the MQTT broker.",
        discussion: """
            A node is named by the iBeacon convention: --store is the major, --department the minor.
            Sources: hci0 (a local adapter; needs CAP_NET_RAW and CAP_NET_ADMIN), btsnoop:PATH (replay a capture \
            written by btmon -w or an Android HCI snoop log), sim (simulated shoppers).
            The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.
            """)

    @Option(help: "Store number (0-65535): the iBeacon major of this store.")
    var store: UInt16

    @Option(help: "Department number (0-65535): the iBeacon minor of this department.")
    var department: UInt16

    @Option(help: "Node id within the department: 1-32 of a-z, 0-9, -.")
    var node: String = "a"

    @Option(help: ArgumentHelp("Broker URL: mqtt://host:port or mqtts://host:port.", valueName: "URL"))
    var broker: String = "mqtt://127.0.0.1:1883"

    @Option(help: ArgumentHelp("Where to hear adverts: hci0 (any hciN), btsnoop:PATH or sim.", valueName: "SOURCE"))
    var source: String = "hci0"

    @Option(help: ArgumentHelp("Replay pace for btsnoop: sources: a factor (1 = recorded pace) or max.", valueName: "X|max"))
    var speed: String = "1"

    @Option(name: .customLong("uuid"), help: ArgumentHelp("Only report iBeacons with this UUID (repeatable; default: all).", valueName: "UUID"))
    var uuids: [String] = []

    @Option(help: ArgumentHelp("Flush window: how long adverts are collected into one batch.", valueName: "DURATION"))
    var flush: String = "500ms"

    @Option(help: ArgumentHelp("A beacon not heard for this long is reported as lost.", valueName: "DURATION"))
    var lostAfter: String = "10s"

    @Option(help: ArgumentHelp("Ignore adverts weaker than this (dBm).", valueName: "DBM"))
    var minRssi: Int = -127

    @Option(help: "QoS of sighting batches: 1 (at least once) or 0.")
    var qos: Int = 1

    @Option(help: ArgumentHelp("Batches kept while the broker is unreachable (the oldest are dropped beyond).", valueName: "N"))
    var queueSize: Int = 10_000

    @Flag(help: "Also report each beacon's advertiser address, strongest reading and first-seen time.")
    var details = false

    @Flag(help: "Also broadcast this department's iBeacon (UUID, major = store, minor = department).")
    var advertise = false

    @Option(help: ArgumentHelp("Broker user name.", valueName: "U"))
    var username: String?

    @Option(help: ArgumentHelp("File holding the broker password.", valueName: "F"))
    var passwordFile: String?

    @Option(help: ArgumentHelp("CA certificate file to verify an mqtts:// broker (default: the system store).", valueName: "F"))
    var cafile: String?

    @Option(help: ArgumentHelp("Departments the simulated shoppers walk through, in order (sim only).", valueName: "10,20,30"))
    var simRoute: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    static func main() async {
        await CommandLineProgram.main(BeaconScanner.self, name: "beacon-scanner")
    }

    /// The validated settings these flags describe.
    func scannerConfiguration() throws -> ScannerConfiguration {
        guard let address = NodeAddress(store: store, department: department, node: node) else {
            throw ValidationError("--node '\(node)' must be 1-32 of a-z, 0-9 and -")
        }
        var configuration = ScannerConfiguration(
            node: address, broker: BrokerConnection(url: broker, username: username, passwordFile: passwordFile, caFile: cafile))
        guard let parsedSource = AdvertSource(source) else {
            throw ValidationError("--source '\(source)' must be hci0 (or another hciN), btsnoop:PATH or sim")
        }
        configuration.source = parsedSource
        guard let parsedSpeed = ReplaySpeed(speed) else { throw ValidationError("--speed '\(speed)' must be a positive number or max") }
        configuration.speed = parsedSpeed
        for text in uuids {
            guard let uuid = BeaconUUID(text) else { throw ValidationError("--uuid '\(text)' is not a UUID (8-4-4-4-12 hex digits)") }
            configuration.aggregation.allowedUUIDs.insert(uuid)
        }
        guard let flushInterval = DurationText.parse(flush), flushInterval > .zero else {
            throw ValidationError("--flush '\(flush)' must be a duration such as 250ms or 1s")
        }
        configuration.aggregation.flushInterval = flushInterval
        guard let lost = DurationText.parse(lostAfter), lost > .zero else {
            throw ValidationError("--lost-after '\(lostAfter)' must be a duration such as 10s")
        }
        configuration.aggregation.lostAfter = lost
        guard (-127...20).contains(minRssi) else { throw ValidationError("--min-rssi \(minRssi) must be between -127 and 20") }
        configuration.aggregation.minimumRSSI = Int8(minRssi)
        guard qos == 0 || qos == 1 else { throw ValidationError("--qos \(qos) must be 0 or 1") }
        configuration.sightingsQoS = qos
        guard queueSize > 0 else { throw ValidationError("--queue-size must be at least 1") }
        configuration.queueCapacity = queueSize
        configuration.aggregation.includeDetails = details
        if let simRoute {
            let departments = simRoute.split(separator: ",").map { UInt16($0.filter { !$0.isWhitespace }) }
            guard !departments.isEmpty, departments.allSatisfy({ $0 != nil }) else {
                throw ValidationError("--sim-route '\(simRoute)' must list department numbers, e.g. 10,20,30")
            }
            configuration.simulationRoute = departments.compactMap { $0 }
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level '\(logLevel)' is not a log level") }
        if advertise { throw ValidationError("--advertise needs the HCI radio, which this build does not drive yet") }
        return configuration
    }

    func validate() throws {
        _ = try scannerConfiguration()
    }

    func run() async throws {
        let configuration = try scannerConfiguration()
        CommandLineProgram.bootstrapLogging(level: Logger.Level(rawValue: logLevel) ?? .info)
        let logger = Logger(label: "beacon-scanner")
        let boot = RandomID.make(hexDigits: 8)
        let mqtt: MQTTConfiguration
        do {
            mqtt = try ScannerService.mqttConfiguration(for: configuration, boot: boot, startedAt: WallClock.now())
        } catch {
            throw UsageError(error.description)
        }
        MQTTLibrary.initialize()
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let service = ScannerService(configuration: configuration, client: client, boot: boot, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
