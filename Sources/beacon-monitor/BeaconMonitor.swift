import ArgumentParser
import BeaconMeshMQTT
import BeaconMeshMonitor
import BeaconMeshService
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `beacon-monitor`: the shopkeeper's view of one store.
@main
struct BeaconMonitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-monitor",
        abstract: "Watch one store: who is in, where, and what was just offered.",
        discussion: "The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.",
        version: BeaconMeshVersion.current)

    @Option(help: "The store to watch (0-65535).")
    var store: UInt16

    @OptionGroup var brokerOptions: BrokerOptions

    @Flag(help: "Print one line per event instead of the full-screen view (the default when output is not a terminal).")
    var plain = false

    @Option(
        help: ArgumentHelp(
            "Show the till panel of this department (marked till: true): members near it, numbered; pressing a number checks that member in.",
            valueName: "DEPT"))
    var till: UInt16?

    @Option(help: "The name this till gives its check-in requests (default: till-DEPT on this host).")
    var tillName: String?

    static func main() async {
        await CommandLineProgram.main(BeaconMonitor.self, name: "beacon-monitor")
    }

    func run() async throws {
        // The full-screen view is for a terminal; `--plain` or a pipe gets one line per event.
        let fullScreen = !plain && isatty(1) != 0
        // Log lines written to the terminal the view is drawn on would tear it: then only critical ones are shown
        // (BEACONMESH_LOG_LEVEL still wins; redirect standard error to keep them).
        CommandLineProgram.bootstrapLogging(level: fullScreen && isatty(2) != 0 ? .critical : .warning)
        let logger = Logger(label: "beacon-monitor")
        let mqtt: MQTTConfiguration
        do {
            mqtt = try brokerOptions.connection
                .mqttConfiguration(clientID: nil, cleanSession: true, lastWill: nil)
        } catch {
            throw UsageError(error.description)
        }
        MQTTLibrary.initialize()
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let service: any Service
        if fullScreen {
            var name = [CChar](repeating: 0, count: 256)
            let host =
                gethostname(&name, name.count) == 0
                ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: ".").first.map(
                    String.init) ?? "till"
                : "till"
            service = FullScreenMonitor(
                store: store, client: client, broker: brokerOptions.connection.url,
                till: till.map { FullScreenMonitor.Till(department: $0, name: tillName ?? "till-\($0)@\(host)") }, logger: logger)
        } else {
            service = PlainMonitor(store: store, client: client, logger: logger) { line in
                CommandLineProgram.printLine(line)
            }
        }
        // `q` ends the full-screen view by returning: that is a normal end, exit 0, like SIGINT and SIGTERM.
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
