import ArgumentParser
import BeaconMeshCoordinator
import BeaconMeshService

/// `beacon-coordinator`: the back-office service and its member registry tools.
@main
struct BeaconCoordinator: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-coordinator",
        abstract: "Works out who is in which department, greets members, fires promos and publishes per-store channels.",
        version: BeaconMeshVersion.current,
        subcommands: [
            RunCommand.self, MembersCommand.self, ProvisionCommand.self, PromosCommand.self, ReportCommand.self, SurveyCommand.self,
            WebhooksCommand.self, NodesCommand.self,
        ])

    static func main() async {
        await CommandLineProgram.main(BeaconCoordinator.self, name: "beacon-coordinator")
    }
}
