import ArgumentParser

/// `beacon-coordinator survey …`: a store's survey, from the command line. Each subcommand is a type of its own
/// (`SurveyMarkCommand`, …): add one to `subcommands` to add it to the group.
struct SurveyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "survey",
        abstract: "Survey a store: mark where a carried beacon is, so its coordinators learn how each department sounds.",
        subcommands: [
            SurveyMarkCommand.self
        ])
}
