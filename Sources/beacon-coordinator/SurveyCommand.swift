import ArgumentParser
import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshWire
import Foundation

/// `beacon-coordinator survey …`: a store's survey in the registry — learn its fit from the samples a walk gathered,
/// show what is kept, clear it. Running coordinators of the store take a new fit, or its clearing, within seconds.
struct SurveyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "survey",
        abstract: "Survey a store: mark where a carried beacon is or import a recorded walk, then learn, show or clear its fit.",
        subcommands: [SurveyMarkCommand.self, SurveyImportCommand.self, Fit.self, Show.self, Clear.self])

    /// The store and the registry a survey subcommand works on.
    struct Target: ParsableArguments {
        @Option(help: "The store's number.") var store: UInt16
        @OptionGroup var database: MembersCommand.Database
    }

    struct Fit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Learn the store's fit from all its samples, keep it, and print its quality; exit 1, keeping the old fit, when a department has too few samples or the new fit decides the samples since the old one worse."
        )
        @OptionGroup var target: Target
        @Flag(help: "Print the quality as one JSON object.") var json = false

        /// A `SurveyFitError` leaves the command as it is thrown: one line, exit 1, nothing saved.
        func run() throws {
            let (samples, installed) = try target.database.use { registry in
                (try registry.surveySamples(store: target.store), try registry.surveyFit(store: target.store))
            }
            let training = try SurveyTraining(samples: samples, store: target.store)
            let now = WallClock.now()
            let (fit, quality) = try training.fit(at: now)
            if let installed, let comparison = training.compare(with: installed, at: now), comparison.isWorse {
                throw SurveyFitError.worseThanInstalled(store: target.store, comparison)
            }
            try target.database.use { try $0.saveSurveyFit(fit) }
            if json {
                print(String(decoding: WireCodec.encode(quality, fittedAt: fit.fittedAt), as: UTF8.self))
            } else {
                print(SurveyTable.render(quality, fittedAt: fit.fittedAt))
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the store's seconds of samples per department and its fit, as a table or JSON.")
        @OptionGroup var target: Target
        @Flag(help: "Print the store, its seconds per department and its fit as one JSON object.") var json = false

        func run() throws {
            let (sources, fit) = try target.database.use { registry in
                (try registry.surveySecondsBySource(store: target.store), try registry.surveyFit(store: target.store))
            }
            if json {
                print(String(decoding: WireCodec.encodeSurvey(store: target.store, seconds: sources, fit: fit), as: UTF8.self))
            } else {
                print(SurveyTable.render(store: target.store, seconds: sources.mapValues { $0.values.reduce(0, +) }, fit: fit))
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete the store's samples and fit: its coordinators go back to deciding without a survey.")
        @OptionGroup var target: Target

        func run() throws {
            let cleared = try target.database.use { try $0.clearSurvey(store: target.store) }
            print(
                "store \(target.store): deleted \(cleared.samples) survey samples"
                    + (cleared.fit ? " and the fit" : "; there was no fit"))
        }
    }
}
