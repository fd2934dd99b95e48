import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshService

/// `beacon-coordinator webhooks test NAME --config FILE`: sends one signed test event to that endpoint.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Try the webhook endpoints of a config.", subcommands: [Test.self])

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "POST one signed test event to the endpoint NAME and print the answer's status (exit 1 unless 2xx).")

        @Argument(help: "The endpoint's name in the config's webhooks.")
        var name: String

        @Option(help: ArgumentHelp("The coordinator's YAML config.", valueName: "FILE"))
        var config: String

        func run() async throws {
            let configuration: CoordinatorConfiguration
            do {
                configuration = try CoordinatorConfiguration.load(path: config, defaultID: "webhooks-test")
            } catch {
                throw UsageError(error.description)
            }
            guard let endpoint = configuration.webhooks.first(where: { $0.name == name }) else {
                let known = configuration.webhooks.map(\.name)
                throw UsageError(
                    "\(config): no webhook named '\(name)'"
                        + (known.isEmpty ? " (the config has no webhooks)" : " (known: \(known.joined(separator: ", ")))"))
            }
            let (line, delivered) = await WebhookTest.send(to: endpoint)
            print(line)
            if !delivered { throw ExitCode(1) }
        }
    }
}
