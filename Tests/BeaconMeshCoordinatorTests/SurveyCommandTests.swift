import ArgumentParser
import BeaconMeshCore
import Foundation
import Testing

@testable import beacon_coordinator

@Suite("beacon-coordinator survey")
struct SurveyCommandTests {
    @Test("fit, show and clear take the store, the database and (fit, show) --json")
    func parse() throws {
        let fit = try #require(
            try BeaconCoordinator.parseAsRoot(["survey", "fit", "--store", "1", "--db", "mesh.sqlite", "--json"]) as? SurveyCommand.Fit)
        #expect(fit.target.store == 1 && fit.target.database.db == "mesh.sqlite" && fit.json)
        let show = try #require(
            try BeaconCoordinator.parseAsRoot(["survey", "show", "--db", "postgres://c@hq/chain", "--store", "65535"])
                as? SurveyCommand.Show)
        #expect(show.target.store == 65535 && show.target.database.db == "postgres://c@hq/chain" && !show.json)
        let clear = try #require(
            try BeaconCoordinator.parseAsRoot(["survey", "clear", "--store", "9", "--db", "mesh.sqlite"]) as? SurveyCommand.Clear)
        #expect(clear.target.store == 9)
    }

    @Test(
        "a wrong value or a missing one is refused in one line naming it",
        arguments: [
            (["survey", "fit", "--db", "mesh.sqlite"], "Missing expected argument '--store <store>'"),
            (["survey", "show", "--store", "1"], "Missing expected argument '--db <FILE|URL>'"),
            (["survey", "clear", "--store", "70000", "--db", "mesh.sqlite"], "The value '70000' is invalid for '--store <store>'"),
            (["survey", "fit", "--store", "1", "--db", ""], "the database is empty: give a SQLite file or a postgres:// URL"),
            (["survey", "show", "--store", "1", "--db", "postgres://c@hq/"], "names no database"),
            (["survey", "clear", "--store", "1", "--db", "mesh.sqlite", "--json"], "Unknown option '--json'"),
            (["survey", "walk"], "Unexpected argument 'walk'"),
        ])
    func wrongValue(arguments: [String], message: String) {
        do {
            _ = try BeaconCoordinator.parseAsRoot(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(BeaconCoordinator.message(for: error).contains(message), "\(BeaconCoordinator.message(for: error))")
            #expect(!BeaconCoordinator.message(for: error).contains("\n"))
            #expect(BeaconCoordinator.exitCode(for: error) == .validationFailure)
        }
    }

    @Test("the quality reads as seconds, stretches and right per department, the confusion matrix and what to walk again")
    func qualityTable() {
        let quality = SurveyQuality(
            store: 1, departments: [10, 20], samples: [60, 45], stretches: [2, 1], confusion: [58, 2, 5, 40], accuracy: 98.0 / 105)
        let utc = TimeZone(identifier: "UTC")!
        #expect(SurveyTable.render(quality, fittedAt: Timestamp(milliseconds: 0), timeZone: utc) == Self.qualityText)
        var walked = quality
        walked.samples = [60, 60]
        walked.stretches = [2, 2]
        walked.confusion = [58, 2, 1, 59]
        #expect(
            SurveyTable.render(walked, fittedAt: Timestamp(milliseconds: 0), timeZone: utc).hasSuffix("\nNo department needs more walking.")
        )
    }

    @Test("show reads as seconds per department and the fit, or that there is none")
    func showTable() {
        #expect(
            SurveyTable.render(store: 1, seconds: [20: 45, 10: 60], fit: nil)
                == """
                Store 1: 105 s of survey samples in 2 departments
                DEPARTMENT  SECONDS
                10          60
                20          45
                Fit: none (the store is decided without a survey; run survey fit)
                """)
        #expect(
            SurveyTable.render(store: 3, seconds: [:], fit: nil).hasPrefix(
                """
                Store 3: 0 s of survey samples in 0 departments
                DEPARTMENT  SECONDS
                (none)
                """))
    }

    /// A command with subcommands has no final line break in its help (the program adds it when printing).
    @Test("--help is pinned for survey and each of its subcommands")
    func help() {
        #expect(BeaconCoordinator.helpMessage(for: SurveyCommand.self, columns: 120) == Self.surveyHelp)
        #expect(BeaconCoordinator.helpMessage(for: SurveyCommand.Fit.self, columns: 120) == Self.fitHelp + "\n")
        #expect(BeaconCoordinator.helpMessage(for: SurveyCommand.Show.self, columns: 120) == Self.showHelp + "\n")
        #expect(BeaconCoordinator.helpMessage(for: SurveyCommand.Clear.self, columns: 120) == Self.clearHelp + "\n")
    }

    static let qualityText = #"""
        Store 1: fit learnt 1970-01-01 00:00 from 105 s of samples in 2 departments
        Right as the decisions will run, each 15 s left out and decided by the others: 93.3 % of the seconds

        DEPARTMENT  SECONDS  STRETCHES  RIGHT
        10          60       2          96.7 %
        20          45       1          88.9 %

        Seconds by where the surveyor was (rows) and what was decided (columns):
        WAS \ DECIDED  10  20
        10             58  2
        20             5   40

        Walk again:
          20: only 45 s: walk it for a minute or more
        """#

    static let surveyHelp = #"""
        OVERVIEW: Survey a store: mark where a carried beacon is or import a recorded walk, then learn, show or clear its fit.

        USAGE: beacon-coordinator survey <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          mark                    Publish one survey mark: where the surveyor carrying a beacon is now.
          import                  Add the survey samples of a labelled recording (layout.csv, truth.csv, one btsnoop capture
                                  per node).
          fit                     Learn the store's fit from all its samples, keep it, and print its quality; exit 1, keeping
                                  the old fit, when a department has too few samples or the new fit decides the samples since
                                  the old one worse.
          show                    Print the store's seconds of samples per department and its fit, as a table or JSON.
          clear                   Delete the store's samples and fit: its coordinators go back to deciding without a survey.

          See 'beacon-coordinator help survey <subcommand>' for detailed help.
        """#

    static let fitHelp = #"""
        OVERVIEW: Learn the store's fit from all its samples, keep it, and print its quality; exit 1, keeping the old fit, when
        a department has too few samples or the new fit decides the samples since the old one worse.

        USAGE: beacon-coordinator survey fit --store <store> --db <FILE|URL> [--json]

        OPTIONS:
          --store <store>         The store's number.
          --db <FILE|URL>         The config's database: a SQLite file, or postgres://USER@HOST:PORT/DB[?sslmode=require]
                                  (password from BEACONMESH_DB_PASSWORD).
          --json                  Print the quality as one JSON object.
          --version               Show the version.
          -h, --help              Show help information.
        """#

    static let showHelp = #"""
        OVERVIEW: Print the store's seconds of samples per department and its fit, as a table or JSON.

        USAGE: beacon-coordinator survey show --store <store> --db <FILE|URL> [--json]

        OPTIONS:
          --store <store>         The store's number.
          --db <FILE|URL>         The config's database: a SQLite file, or postgres://USER@HOST:PORT/DB[?sslmode=require]
                                  (password from BEACONMESH_DB_PASSWORD).
          --json                  Print the store, its seconds per department and its fit as one JSON object.
          --version               Show the version.
          -h, --help              Show help information.
        """#

    static let clearHelp = #"""
        OVERVIEW: Delete the store's samples and fit: its coordinators go back to deciding without a survey.

        USAGE: beacon-coordinator survey clear --store <store> --db <FILE|URL>

        OPTIONS:
          --store <store>         The store's number.
          --db <FILE|URL>         The config's database: a SQLite file, or postgres://USER@HOST:PORT/DB[?sslmode=require]
                                  (password from BEACONMESH_DB_PASSWORD).
          --version               Show the version.
          -h, --help              Show help information.
        """#
}
