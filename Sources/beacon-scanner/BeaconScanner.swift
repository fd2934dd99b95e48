import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshScanner
import BeaconMeshService
import Logging
import ServiceLifecycle
import UnixSignals

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
            """,
        version: BeaconMeshVersion.current)

    /// Every setting, typed; a `--config` file fills what the flags leave out.
    @OptionGroup var options: ScannerOptions

    static func main() async {
        ScannerAllocator.configure()
        await CommandLineProgram.main(BeaconScanner.self, name: "beacon-scanner")
    }

    /// The flags and the config file, merged (flags win) but not yet checked.
    func settings() throws -> ScannerSettings {
        var file: ScannerConfigFile?
        if let config = options.config {
            do {
                file = try ScannerConfigFile(path: config, allowedKeys: ScannerOptions.configKeys)
            } catch {
                throw UsageError(error.description)
            }
        }
        return try ScannerSettings(commandLine: options, file: file)
    }

    func validate() throws {
        _ = try settings().resolve()
    }

    func run() async throws {
        let settings = try settings()
        let configuration = try settings.resolve()
        CommandLineProgram.bootstrapLogging(level: settings.logLevel)
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
        let service = ScannerService(
            configuration: configuration, client: client, boot: boot, startedAt: startedAt,
            logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let failure as ScannerService.Failure {
            throw UsageError(failure.description)
        }
    }
}
