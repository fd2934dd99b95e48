import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshMQTT
import BeaconMeshMetrics
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// `beacon-coordinator run --config FILE`: runs the coordinator until SIGINT or SIGTERM.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run the coordinator with a YAML config (see CONTRACT: Coordinator config).")

    @Option(name: .long, help: ArgumentHelp("The coordinator's YAML config.", valueName: "FILE"))
    var config: String

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp("How often to publish the coordinator's health.", valueName: "DURATION"))
    var healthInterval = DurationArgument(.seconds(30))

    func validate() throws {
        guard healthInterval.duration >= .milliseconds(100) else {
            throw ValidationError(
                "--health-interval '\(healthInterval.defaultValueDescription)' must be a duration of at least 100ms, such as 30s")
        }
    }

    func run() async throws {
        CommandLineProgram.bootstrapLogging(level: logLevel)
        let logger = Logger(label: "beacon-coordinator")
        let hostName = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "coordinator"
        let configuration: CoordinatorConfiguration
        let connections: CoordinatorService.Connections
        do {
            configuration = try CoordinatorConfiguration.load(path: config, defaultID: hostName.lowercased())
            connections = try CoordinatorService.mqttConfigurations(for: configuration)
        } catch let error as ConfigurationError {
            throw UsageError(error.description)
        } catch {
            throw UsageError("\(config): \(error)")
        }
        let registry: any MemberRegistry
        let cache = configuration.cache.map(CoordinatorCacheFile.init(path:))
        var coldStart: CoordinatorService.ColdStart?
        do {
            registry = try RegistryLocation(configuration.database).open(
                passwordFile: configuration.databasePasswordFile, logger: logger)
        } catch let failure where failure.kind == .unavailable && cache != nil {
            // The chain's database cannot be reached: start from the local cache, and catch up once it is back.
            (registry, coldStart) = try Self.openWithoutDatabase(configuration, cache: cache!, failure: failure, logger: logger)
        } catch {
            throw UsageError(error.description)
        }
        // Several coordinators may list a store only with a shared PostgreSQL registry, where leases pick the one that
        // decides; a SQLite registry is one coordinator's, and a second one on the same file is refused.
        var leases: (any StoreLeases)?
        var soleLock: SoleCoordinatorLock?
        do {
            if let shared = registry as? PostgresRegistry {
                leases = try shared.leases(timeout: configuration.lease.ttl / 2)
            } else if case .sqlite(let path) = try RegistryLocation(configuration.database) {
                soleLock = try SoleCoordinatorLock(database: path)
            }
        } catch {
            throw UsageError("\(config): \(error)")
        }
        var secrets: SecretsKey?
        if let path = configuration.secretsKeyFile {
            do { secrets = try SecretsKey(contentsOf: path) } catch { throw UsageError("\(config): secretsKeyFile \(error)") }
        }
        // A registry whose fobs do not open with this key refuses the start before the CSV changes anything.
        if configuration.members != nil, coldStart == nil {
            _ = try Self.fobResolution(registry, secrets: secrets, config: config, logger: logger)
        }
        if let members = configuration.members, coldStart != nil {
            logger.warning("members CSV not merged: the database cannot be reached", metadata: ["file": "\(members)"])
        } else {
            var records: [MemberRecord] = []
            if let members = configuration.members {
                do {
                    let file = try MembersCSV.read(path: members)
                    records = try MembersCommand.sealing(file, with: secrets, missing: "\(config): secretsKeyFile")
                } catch let error as UsageError {
                    throw error
                } catch {
                    throw UsageError("\(error)")
                }
            }
            // Checked before the CSV is merged: a config refused changes nothing.
            try Self.checkReferences(
                configuration,
                owners: {
                    var owners = try registry.contents().beaconOwners
                    for record in records { for beacon in record.beacons { owners[beacon] = record.id } }
                    return owners
                }, config: config)
            if let members = configuration.members {
                do {
                    let summary = try registry.merge(records)
                    logger.info("members merged from CSV", metadata: ["file": "\(members)", "result": "\(summary)"])
                } catch {
                    throw UsageError("\(error)")
                }
            }
        }
        // Members' Eddystone-EID fobs as the registry now holds them (the CSV's included). Started from the cache (which
        // holds no fob keys, sealed or not), none yet: they come with the registry once it is back.
        let fobs =
            try coldStart == nil
            ? Self.fobResolution(registry, secrets: secrets, config: config, logger: logger)
            : secrets.map { try FobResolution(fobs: [:], secrets: $0, now: WallClock.now().milliseconds / 1000, logger: logger) }
        MQTTLibrary.initialize()
        let service = CoordinatorService(
            configuration: configuration, registry: registry, leases: leases,
            session: try MQTTClient(configuration: connections.session, logger: logger),
            publisher: try MQTTClient(configuration: connections.publisher, logger: logger), logger: logger,
            healthInterval: healthInterval.duration, cache: cache, coldStart: coldStart, fobs: fobs)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let metrics = configuration.metrics {
            PrometheusMetrics.bootstrap()
            services.append(
                .init(
                    service: MetricsServer.service(host: metrics.host, port: metrics.port, logger: logger) { port in
                        logger.info("metrics served", metadata: ["url": "http://\(ListenAddress(host: metrics.host, port: port))/metrics"])
                    }))
        }
        services.append(.init(service: service))
        let group = ServiceGroup(
            configuration: .init(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        withExtendedLifetime(soleLock) {}
    }

    /// The resolution of the members' Eddystone-EID fobs `registry` holds (`nil` with none and no secrets key); a usage
    /// error in one line when they do not open: no `secretsKeyFile`, or another key (it would decide them as strangers).
    static func fobResolution(_ registry: any MemberRegistry, secrets: SecretsKey?, config: String, logger: Logger) throws
        -> FobResolution?
    {
        do {
            let sealed = try registry.contents().fobs
            guard !sealed.isEmpty || secrets != nil else { return nil }
            return try FobResolution(fobs: sealed, secrets: secrets, now: WallClock.now().milliseconds / 1000, logger: logger)
        } catch let failure as SecretsKey.Failure {
            throw UsageError("\(config): \(failure.description)\(secrets == nil ? "" : " (secretsKeyFile is another key)")")
        } catch {
            throw UsageError("\(registry.location): \(registry.describe(error))")
        }
    }

    /// A usage error naming the config's line when a store's reference is a member's beacon: a reference is never
    /// a member (its readings are trusted truth about its department).
    static func checkReferences(
        _ configuration: CoordinatorConfiguration, owners readOwners: () throws -> [BeaconKey: String], config: String
    ) throws {
        let references = configuration.stores.flatMap(\.references)
        guard !references.isEmpty else { return }
        let owners: [BeaconKey: String]
        do { owners = try readOwners() } catch { throw UsageError("\(config): \(error)") }
        for reference in references {
            guard let member = owners[reference.beacon] else { continue }
            throw UsageError(
                ConfigurationError(
                    file: config, line: reference.line,
                    message: "the reference \(reference.beacon) is a beacon of member '\(member)': a reference is nobody's"
                ).description)
        }
    }

    /// The registry to connect to once the database is back, and the start from the local cache `cache`; a usage
    /// error naming both when there is no cache to start from.
    private static func openWithoutDatabase(
        _ configuration: CoordinatorConfiguration, cache: CoordinatorCacheFile, failure: RegistryFailure, logger: Logger
    ) throws -> (any MemberRegistry, CoordinatorService.ColdStart) {
        let document: CoordinatorCacheDocument
        do {
            guard let read = try cache.read(coordinator: configuration.id, database: configuration.database) else {
                throw UsageError("\(failure.description); no local cache to start from (\(cache.path) does not exist yet)")
            }
            document = read
        } catch let unusable as CoordinatorCacheFile.Failure {
            throw UsageError("\(failure.description); \(unusable.description)")
        }
        let registry: any MemberRegistry
        do {
            registry = try RegistryLocation(configuration.database).open(
                passwordFile: configuration.databasePasswordFile, logger: logger, connectingLater: true)
        } catch {
            throw UsageError(error.description)
        }
        logger.warning(
            "the database cannot be reached: starting from the local cache",
            metadata: [
                "cache": "\(cache.path)", "savedAt": "\(document.savedAt.milliseconds)", "members": "\(document.members.count)",
                "error": "\(failure.description)",
            ])
        return (registry, CoordinatorService.ColdStart(cache: document, cause: failure.description))
    }
}
