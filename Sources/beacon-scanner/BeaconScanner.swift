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
            Every flag can also be set in a YAML --config file, by its long name in camelCase \
            (store: 1, passwordFile: /etc/beaconmesh/node.pass, uuid: [...]); flags win over the file.
            The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.
            """)

    @Option(help: ArgumentHelp("A YAML file holding any of these settings.", valueName: "FILE"))
    var config: String?

    @Option(help: ArgumentHelp("Store number (0-65535): the iBeacon major of this store.", valueName: "N"))
    var store: String?

    @Option(help: ArgumentHelp("Department number (0-65535): the iBeacon minor of this department.", valueName: "N"))
    var department: String?

    @Option(help: ArgumentHelp("Node id within the department: 1-32 of a-z, 0-9, - (default a).", valueName: "ID"))
    var node: String?

    @OptionGroup var brokerOptions: BrokerOptions

    @Option(help: ArgumentHelp("Where to hear adverts: hci0 (any hciN; the default), btsnoop:PATH or sim.", valueName: "SOURCE"))
    var source: String?

    @Option(help: ArgumentHelp("Replay pace for btsnoop: sources: a factor (1 = recorded pace, the default) or max.", valueName: "X|max"))
    var speed: String?

    @Option(name: .customLong("uuid"), help: ArgumentHelp("Only report iBeacons with this UUID (repeatable; default: all). The first is also the one --advertise sends.", valueName: "UUID"))
    var uuids: [String] = []

    @Option(help: ArgumentHelp("Flush window: how long adverts are collected into one batch (default 500ms).", valueName: "DURATION"))
    var flush: String?

    @Option(help: ArgumentHelp("A beacon not heard for this long is reported as lost (default 10s).", valueName: "DURATION"))
    var lostAfter: String?

    @Option(help: ArgumentHelp("Ignore adverts weaker than this (dBm, default -127).", valueName: "DBM"))
    var minRssi: String?

    @Option(help: ArgumentHelp("QoS of sighting batches: 1 (at least once; the default) or 0.", valueName: "0|1"))
    var qos: String?

    @Option(help: ArgumentHelp("Batches kept while the broker is unreachable; the oldest are dropped beyond (default 10000).", valueName: "N"))
    var queueSize: String?

    @Flag(help: "Also report each beacon's advertiser address, strongest reading and first-seen time.")
    var details = false

    @Flag(help: "Also broadcast this department's iBeacon (UUID, major = store, minor = department).")
    var advertise = false

    @Option(help: ArgumentHelp("Measured power at 1 m that --advertise announces (dBm, default -59).", valueName: "DBM"))
    var measuredPower: String?

    @Option(help: ArgumentHelp("Write what the radio hears to a btsnoop file (opens in btmon -r and Wireshark).", valueName: "PATH"))
    var record: String?

    @Option(help: ArgumentHelp("LE scan interval (default 100ms).", valueName: "DURATION"))
    var scanInterval: String?

    @Option(help: ArgumentHelp("LE scan window, at most the interval (default: the interval).", valueName: "DURATION"))
    var scanWindow: String?

    @Flag(help: "Scan actively (ask for scan responses) instead of passively.")
    var activeScan = false

    @Option(help: ArgumentHelp("Path-loss exponent of the distance model (2 in free space, 2.5-4 indoors; default 2).", valueName: "N"))
    var pathLossExponent: String?

    @Option(help: ArgumentHelp("Added to every reading of this node to calibrate its antenna (dB).", valueName: "DB"))
    var rssiAdjustment: String?

    @Option(help: ArgumentHelp("Closer than this is immediate (metres, default 0.5).", valueName: "M"))
    var immediateBelow: String?

    @Option(help: ArgumentHelp("Closer than this is near, farther is far (metres, default 3).", valueName: "M"))
    var nearBelow: String?

    @Option(help: ArgumentHelp("Measured power at 1 m for beacons whose frames carry none (dBm, default -59).", valueName: "DBM"))
    var defaultTxPower: String?

    @Option(help: ArgumentHelp("Departments the simulated shoppers walk through, in order (sim only).", valueName: "10,20,30"))
    var simRoute: String?

    @Option(help: ArgumentHelp("How long simulated shoppers stay away between walks (sim only; default 60s, 0s: never leave).", valueName: "DURATION"))
    var simOutside: String?

    @Option(help: ArgumentHelp("Log level: trace, debug, info (default), notice, warning, error or critical.", valueName: "LEVEL"))
    var logLevel: String?

    static func main() async {
        await CommandLineProgram.main(BeaconScanner.self, name: "beacon-scanner")
    }

    /// The flags and the config file, merged (flags win) but not yet checked.
    func settings() throws -> ScannerSettings {
        var settings = ScannerSettings()
        let values: [(String, String?)] = [
            ("store", store), ("department", department), ("node", node), ("broker", brokerOptions.broker), ("source", source),
            ("speed", speed), ("flush", flush), ("lostAfter", lostAfter), ("minRssi", minRssi), ("qos", qos),
            ("queueSize", queueSize), ("details", details ? "true" : nil), ("advertise", advertise ? "true" : nil),
            ("measuredPower", measuredPower), ("record", record), ("scanInterval", scanInterval),
            ("scanWindow", scanWindow), ("activeScan", activeScan ? "true" : nil),
            ("pathLossExponent", pathLossExponent), ("rssiAdjustment", rssiAdjustment), ("username", brokerOptions.username),
            ("passwordFile", brokerOptions.passwordFile), ("cafile", brokerOptions.cafile), ("simRoute", simRoute), ("logLevel", logLevel),
            ("immediateBelow", immediateBelow), ("nearBelow", nearBelow), ("defaultTxPower", defaultTxPower),
            ("simOutside", simOutside),
        ]
        for (key, value) in values { settings.flag(key, value) }
        settings.flag("uuid", list: uuids)
        if let config {
            do {
                settings.add(try ScannerConfigFile(path: config, allowedKeys: ScannerSettings.keys))
            } catch {
                throw UsageError(error.description)
            }
        }
        return settings
    }

    func validate() throws {
        _ = try settings().resolve()
    }

    func run() async throws {
        let settings = try settings()
        let configuration = try settings.resolve()
        CommandLineProgram.bootstrapLogging(level: Logger.Level(rawValue: settings.logLevel) ?? .info)
        let logger = Logger(label: "beacon-scanner")
        let boot = RandomID.make(hexDigits: 8)
        let startedAt = WallClock.now()
        let mqtt: MQTTConfiguration
        do {
            mqtt = try ScannerService.mqttConfiguration(for: configuration, boot: boot, startedAt: startedAt)
        } catch {
            throw UsageError(error.description)
        }
        MQTTLibrary.initialize()
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let service = ScannerService(configuration: configuration, client: client, boot: boot, startedAt: startedAt,
                                     logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let failure as ScannerService.Failure {
            throw UsageError(failure.description)
        }
    }
}
