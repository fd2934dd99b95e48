import ArgumentParser
import BeaconMeshDashboard
import BeaconMeshMQTT
import BeaconMeshMetrics
import BeaconMeshRegistry
import BeaconMeshService
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `beacon-dashboard`: the web view of the chain and its stores, read-only from the broker.
@main
struct BeaconDashboard: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-dashboard",
        abstract: "Serve the chain overview and live store pages on the web, read from the broker.",
        usage: """
            beacon-dashboard [--broker <URL>] [--username <U>] [--password-file <F>] [--cafile <F>] [--listen <HOST:PORT>] \
            [--store <N> ...] [--db <FILE|URL>] [--users <FILE>] [--tls-cert <F> --tls-key <F>] [--log-level <log-level>]
            beacon-dashboard users add <name> --stores <1,2|all> --file <FILE>
            """,
        discussion: """
            Pages: / (the chain overview), /stores/N (a store's live page), /api/stores/N/presence (the latest \
            presence snapshot as JSON), /healthz, /metrics (Prometheus). With --db (the registry, read only): \
            /analytics, /stores/N/analytics (charts) and /api/stores/N/analytics?from=MS&to=MS (the analytics object); \
            the PostgreSQL password comes from BEACONMESH_DB_PASSWORD. The broker password comes from \
            --password-file or the BEACONMESH_PASSWORD environment variable.
            Sign-in: --users FILE (make it with `beacon-dashboard users add`) lets in only the people it lists, each \
            to their own stores, through /login or HTTP Basic. Without --users the dashboard listens on loopback only.
            """,
        version: BeaconMeshVersion.current,
        subcommands: [UsersCommand.self])

    @OptionGroup var brokerOptions: BrokerOptions

    @Option(help: ArgumentHelp("Where to serve the pages (port 0: any free port).", valueName: "HOST:PORT"))
    var listen = ListenAddress(host: "127.0.0.1", port: 8080)

    @Option(
        name: .customLong("store"),
        help: ArgumentHelp("Show only this store (0-65535); repeat for several. Default: every store heard.", valueName: "N"))
    var stores: [UInt16] = []

    @Option(
        help: ArgumentHelp(
            "The registry for shopper analytics: the coordinators' SQLite file or postgres:// URL (only read).",
            valueName: "FILE|URL"))
    var db: String?

    @Option(
        help: ArgumentHelp(
            "Users file (YAML; beacon-dashboard users add): sign-in required, each user sees only their stores.", valueName: "FILE"))
    var users: String?

    @Option(help: ArgumentHelp("Serve HTTPS with this PEM certificate (chain); needs --tls-key.", valueName: "F"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "F"))
    var tlsKey: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        if let db {
            do {
                _ = try RegistryLocation(db)
            } catch {
                throw ValidationError("--db: \(error.description)")
            }
        }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together: give both or neither") }
        if users == nil && !listen.isLoopback {
            throw ValidationError(
                "--listen \(listen) is reachable from other machines, and without --users anyone there would see every "
                    + "store's shoppers: add --users FILE (beacon-dashboard users add) or listen on 127.0.0.1")
        }
    }

    /// How many received messages may wait for the dashboard (the MQTT client's default is 10 000).
    static let incomingBufferLimit = 200

    static func main() async {
        await CommandLineProgram.main(BeaconDashboard.self, name: "beacon-dashboard")
    }

    func run() async throws {
        CommandLineProgram.bootstrapLogging(level: logLevel)
        PrometheusMetrics.bootstrap()
        let logger = Logger(label: "beacon-dashboard")
        // The users file and the certificate first: a mistake in either exits 2 before anything starts.
        let access = try users.map { path throws(UsageError) in
            do throws(UsersFileError) {
                return DashboardAccess(users: try UsersFile.load(path: path), secureCookies: tlsCert != nil, logger: logger)
            } catch {
                throw UsageError(error.description)
            }
        }
        let tls = try tlsCert.map { certificate throws(UsageError) in
            try DashboardServer.tlsConfiguration(certificate: certificate, key: tlsKey ?? "")
        }
        let registry = try db.map { location throws(UsageError) in
            do throws(RegistryFailure) {
                return try RegistryLocation(location).open(logger: logger)
            } catch {
                throw UsageError(error.description)
            }
        }
        let analytics = registry.map { AnalyticsSource(registry: $0) }
        // The survey page's seconds per department come from the registry behind --db.
        let surveyProgress = registry.map { RegistrySurveyProgress(registry: $0) as any SurveyProgressReading }
        let scheme = tls == nil ? "http" : "https"
        let signIn = access == nil ? "" : ", sign-in required"
        var mqtt: MQTTConfiguration
        do {
            mqtt = try brokerOptions.connection.mqttConfiguration(clientID: nil, cleanSession: true, lastWill: nil)
        } catch {
            throw UsageError(error.description)
        }
        // A presence snapshot with photos is up to 256 KiB: should the pages fall behind the broker (a chain's retained
        // snapshots at start), at most this many wait in memory; the broker keeps the rest.
        mqtt.incomingBufferLimit = Self.incomingBufferLimit
        MQTTLibrary.initialize()
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let hub = DashboardHub(board: ChainBoard(broker: brokerOptions.connection.url, stores: Set(stores)))
        let feed = DashboardFeed(client: client, hub: hub, stores: stores, logger: logger)
        // The survey page's marks go out on the feed's connection (its broker account may write them).
        let survey = surveyProgress.map { DashboardSurvey(progress: $0, client: client) }
        let broker = mqtt.broker
        let server = try DashboardServer.service(
            hub: hub, listen: listen, metricsText: PrometheusMetrics.exposition, access: access, tls: tls, analytics: analytics,
            survey: survey, logger: logger
        ) { bound in
            CommandLineProgram.printLine("beacon-dashboard: serving \(bound.url(scheme: scheme)) (broker \(broker)\(signIn))")
        }
        // Services shut down in reverse order: the feed first (it ends the live pages' streams), then the server.
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: server), .init(service: feed)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
