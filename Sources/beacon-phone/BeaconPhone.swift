import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshPhone
import BeaconMeshService
import Logging
import ServiceLifecycle
import UnixSignals

/// `beacon-phone`: a member's phone app, simulated — ranges a store's department beacons along a route, publishes
/// ranging reports, and prints the offers and check-ins it receives.
@main
struct BeaconPhone: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-phone",
        abstract: "Simulate a member's phone app: range a store's departments along a route and print the offers and check-ins it gets.",
        discussion: """
            The store's department nodes advertise the chain's iBeacon (major = store, minor = department); the phone \
            ranges them, nearest department strong (near), the route's neighbours faint (far), and publishes a ranging \
            report about once a second. After the route it has left the store: one report with no beacons, then \
            silence (with --loop it comes back after --away and walks again). It prints one line per offer and \
            check-in on its own topics until SIGINT or SIGTERM.
            The broker password comes from --password-file or the BEACONMESH_PASSWORD environment variable.
            """,
        version: BeaconMeshVersion.current)

    @Option(help: ArgumentHelp("The member whose phone this is (their id in the registry).", valueName: "ID"))
    var member: String

    @Option(help: ArgumentHelp("The store whose department beacons it ranges (0-65535).", valueName: "N"))
    var store: UInt16

    @OptionGroup var brokerOptions: BrokerOptions

    @Option(help: ArgumentHelp("Departments to walk through, in order.", valueName: "DEPT,DEPT,..."))
    var route = RouteArgument(PhoneConfiguration.defaultRoute)

    @Option(help: ArgumentHelp("How long to stay in each department.", valueName: "DURATION"))
    var dwell = DurationArgument(PhoneConfiguration.defaultDwell)

    @Flag(help: "Walk the route again and again, out of the store for --away between walks.")
    var loop = false

    @Option(help: ArgumentHelp("With --loop: how long to stay out of the store between walks (default 60s).", valueName: "DURATION"))
    var away: DurationArgument?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("How far this phone's clock is off, e.g. -3h or 90s (it stamps its reports with it).", valueName: "DURATION"))
    var clockOffset = DurationArgument(.zero)

    static func main() async {
        await CommandLineProgram.main(BeaconPhone.self, name: "beacon-phone")
    }

    func validate() throws {
        if !PhoneConfiguration.isValidMemberID(member) {
            throw ValidationError("--member '\(member)' must be 1-64 of a-z, A-Z, 0-9, '.', '_' and '-'")
        }
        if dwell.duration <= .zero { throw ValidationError("--dwell must be longer than 0s") }
        if let away {
            if !loop { throw ValidationError("--away needs --loop") }
            if away.duration < .zero { throw ValidationError("--away cannot be negative") }
        }
    }

    /// The phone's settings from its flags.
    var phoneConfiguration: PhoneConfiguration {
        let walk = PhoneWalk(
            route: route.departments, dwell: dwell.duration,
            away: loop ? (away?.duration ?? .seconds(60)) : nil)
        var configuration = PhoneConfiguration(member: member, store: store, walk: walk, broker: brokerOptions.connection)
        configuration.clockOffset = clockOffset.duration
        return configuration
    }

    private func brokerConfiguration(session: String) throws -> MQTTConfiguration {
        do {
            return try PhoneService.mqttConfiguration(for: phoneConfiguration, session: session)
        } catch {
            throw UsageError(error.description)
        }
    }

    func run() async throws {
        CommandLineProgram.bootstrapLogging(level: .info)
        let logger = Logger(label: "beacon-phone")
        let session = RandomID.make(hexDigits: 8)
        let mqtt = try brokerConfiguration(session: session)
        MQTTLibrary.initialize()
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let service = PhoneService(
            configuration: phoneConfiguration, client: client, session: session, logger: logger,
            write: { CommandLineProgram.printLine($0) },
            warn: { CommandLineProgram.printError("beacon-phone: \($0)") })
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
