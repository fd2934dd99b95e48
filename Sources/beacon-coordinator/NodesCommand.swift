import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging

/// `beacon-coordinator nodes list|set`: head office's fleet view through the broker (the fleet credential of
/// `provision fleet`).
struct NodesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nodes",
        abstract: "List the nodes the broker holds a status of, or change their settings live (node config).",
        subcommands: [ListNodes.self, SetSettings.self])

    /// How long to wait for the broker to accept the connection.
    static let brokerTimeout: Duration = .seconds(10)

    /// Connects a watch of `store` (or every store) with `options`; exit 1 when the broker cannot be reached.
    static func watch(_ options: BrokerOptions, store: UInt16?) async throws -> FleetWatch {
        CommandLineProgram.bootstrapLogging(level: .error)
        let mqtt: MQTTConfiguration
        do {
            mqtt = try options.connection.mqttConfiguration(clientID: nil, cleanSession: true, lastWill: nil)
        } catch {
            throw UsageError(error.description)
        }
        MQTTLibrary.initialize()
        let client = try MQTTClient(configuration: mqtt, logger: Logger(label: "beacon-coordinator"))
        // Why the broker could not be reached, should it not be (the events end when the client disconnects).
        async let problem = BrokerEventLog.lastProblem(client.connectionEvents())
        let watch = try FleetWatch(client: client, topics: Topics(), store: store)
        guard await watch.gatherRetained(timeout: brokerTimeout) else {
            await watch.close()
            let why = (await problem).map { " (\($0))" } ?? ""
            throw NodesFailure("cannot reach the broker at \(mqtt.broker) within 10 s\(why)")
        }
        return watch
    }

    struct ListNodes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "Every node the broker holds a status of: version, config revision and state, uptime, adverts/s, last heard.",
            discussion: """
                Reads the nodes' retained status, then their health heard while it listens (nodes report health every \
                30 s by default, so uptime, adverts/s and last heard are often empty: '-' in the table, null in JSON).
                """)

        @Option(help: ArgumentHelp("Only this store's nodes.", valueName: "N")) var store: UInt16?
        @Flag(help: "Print the nodes as one JSON list.") var json = false
        @OptionGroup var brokerOptions: BrokerOptions

        func run() async throws {
            let watch = try await NodesCommand.watch(brokerOptions, store: store)
            let directory = watch.directory
            await watch.close()
            let entries = directory.entries(store: store)
            if json {
                CommandLineProgram.printLine(String(decoding: WireCodec.encode(nodeEntries: entries), as: UTF8.self))
                return
            }
            let newest = directory.newestVersion
            let rows = entries.map { entry -> [String] in
                let version = entry.status.version
                let behind = newest.map { NodeDirectory.isOlder(version, than: $0) } ?? false
                return [
                    String(entry.address.store), String(entry.address.department), entry.address.node, entry.status.state.rawValue,
                    behind ? "\(version) (behind)" : version, NodesCommand.describe(entry.status.config),
                    entry.health.map { DurationText.spoken(seconds: Int($0.uptimeSeconds)) } ?? "-",
                    entry.health.map { String(format1: $0.advertsPerSecond) } ?? "-",
                    entry.lastHeard.map { "\((WallClock.now() - $0).wholeMilliseconds / 1000)s ago" } ?? "-",
                ]
            }
            CommandLineProgram.printLine(
                TextColumns.render(
                    ["STORE", "DEPT", "NODE", "STATE", "VERSION", "CONFIG", "UPTIME", "ADVERTS/S", "LAST HEARD"], rows))
            CommandLineProgram.printLine("\(entries.count) nodes")
        }
    }

    /// `store 7 applied, node 2 refused: …` or `-`.
    static func describe(_ reports: NodeConfigReports) -> String {
        let parts = NodeConfigLevel.allCases.compactMap { level in
            reports[level].map { "\(level.rawValue) \($0.revision) \($0.state.rawValue)" + ($0.error.map { ": \($0)" } ?? "") }
        }
        return parts.isEmpty ? "-" : parts.joined(separator: ", ")
    }
}

/// Why a nodes command failed, in one line (exit 1).
struct NodesFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension String {
    /// A number with one decimal: `12.5`.
    fileprivate init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
