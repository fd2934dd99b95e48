import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshCore
import BeaconMeshService

extension NodesCommand {
    /// `nodes set --store N [--department D --node ID] KEY=VALUE… [--clear]`: publishes the store's (or one node's)
    /// node config with those keys over the ones it had, then waits for the addressed nodes to apply it.
    struct SetSettings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Change settings of a store's nodes (or of one node) live: publish its node config and wait for them to apply it.",
            discussion: """
                Keys: \(NodeSettingKey.allCases.map(\.rawValue).joined(separator: ", ")). VALUE: a number, true/false, a \
                duration (500ms, 30s), a log level, or for uuid a comma-separated list. The keys are set over the ones \
                the config had (--clear: only these). Exit 0 when every addressed node that is online applied it \
                within 10 s, 1 naming the nodes that refused it or did not answer, 2 for a key or value no node takes \
                (then nothing is published).
                """)

        /// How long the addressed nodes have to apply the config.
        static let applyTimeout: Duration = .seconds(10)

        @Option(help: ArgumentHelp("The store (0-65535).", valueName: "N")) var store: UInt16
        @Option(help: ArgumentHelp("With --node: one node's own config instead of the store's.", valueName: "D"))
        var department: UInt16?
        @Option(help: ArgumentHelp("With --department: the node's id.", valueName: "ID")) var node: String?
        @Flag(help: "Empty the config first: it then holds only the keys given.") var clear = false
        @Argument(help: ArgumentHelp("The settings to set.", valueName: "KEY=VALUE")) var settings: [String] = []
        @OptionGroup var brokerOptions: BrokerOptions

        func validate() throws {
            if (department == nil) != (node == nil) { throw ValidationError("--department and --node go together") }
            if let node, !NodeAddress.isValidNodeID(node) { throw ValidationError("--node '\(node)' must be 1-32 of a-z, 0-9 and -") }
            if settings.isEmpty && !clear { throw ValidationError("give at least one KEY=VALUE (or --clear to empty the config)") }
            _ = try Self.parse(settings)
        }

        /// The settings the arguments give; a `ValidationError` naming the first bad one.
        static func parse(_ arguments: [String]) throws -> NodeSettings {
            var parsed = NodeSettings()
            for argument in arguments {
                guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                    throw ValidationError("'\(argument)' is not KEY=VALUE")
                }
                let name = String(argument[..<equals])
                let text = String(argument[argument.index(after: equals)...])
                guard let key = NodeSettingKey(rawValue: name) else {
                    throw ValidationError(
                        "'\(name)' is not a node config setting (\(NodeSettingKey.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                do {
                    try parsed.set(key, key.value(fromText: text))
                } catch {
                    throw ValidationError("\(name) '\(text)' \(key.expectation)")
                }
            }
            return parsed
        }

        func run() async throws {
            let given = try Self.parse(settings)
            let address = department.flatMap { department in node.flatMap { NodeAddress(store: store, department: department, node: $0) } }
            let level: NodeConfigLevel = address == nil ? .store : .node
            let topics = Topics()
            let topic = address.map(topics.nodeConfig) ?? topics.storeNodeConfig(store: store)
            let watch = try await NodesCommand.watch(brokerOptions, store: store)
            let directory = watch.directory
            let retained = address.map { directory.nodeConfigs[$0] } ?? directory.storeConfigs[store]
            // The retained config's keys (those this build reads), then the ones given.
            var kept = NodeSettings()
            if !clear, let retained, let checked = try? retained.checked() { kept = checked.settings }
            let addressed = directory.entries(store: store).filter { address == nil || $0.address == address }
            let applied = addressed.compactMap { entry in
                entry.status.config[level].flatMap { $0.state == .applied ? $0.revision : nil }
            }
            let revision = 1 + ([retained?.revision ?? 0] + applied).max()!
            let config = NodeConfig(revision: revision, at: WallClock.now(), settings: kept.overridden(by: given))
            let online = Swift.Set(addressed.filter { $0.status.state == .online }.map(\.address))
            do {
                guard try await watch.publish(config, to: topic, timeout: NodesCommand.brokerTimeout) else {
                    await watch.close()
                    throw NodesFailure("the broker did not acknowledge the node config within 10 s (does this user may publish \(topic)?)")
                }
            } catch let error as NodesFailure {
                throw error
            } catch {
                await watch.close()
                throw NodesFailure("cannot publish the node config: \(error)")
            }
            CommandLineProgram.printLine("published revision \(revision) to \(topic); waiting for \(online.count) online nodes")
            // A node has answered once its status reports this revision for the level (or, for an emptied config,
            // no config of the level).
            let answered = { (directory: NodeDirectory) -> [NodeDirectory.Entry] in
                directory.entries(store: store).filter { entry in
                    guard online.contains(entry.address) else { return false }
                    guard let report = entry.status.config[level] else { return config.settings.isEmpty }
                    return report.revision == revision
                }
            }
            _ = await watch.wait(timeout: Self.applyTimeout) { answered($0).count == online.count }
            let answers = answered(watch.directory)
            await watch.close()
            var failures: [String] = []
            for entry in answers {
                let name = "\(entry.address.store)/\(entry.address.department)/\(entry.address.node)"
                if let report = entry.status.config[level], report.state == .refused {
                    failures.append("\(name) refused: \(report.error ?? "no reason given")")
                } else {
                    CommandLineProgram.printLine("\(name) applied revision \(revision)")
                }
            }
            let silent = online.subtracting(answers.map(\.address)).sorted()
            failures += silent.map { "\($0.store)/\($0.department)/\($0.node) did not answer within 10 s" }
            guard failures.isEmpty else { throw NodesFailure(failures.joined(separator: "; ")) }
        }
    }
}
