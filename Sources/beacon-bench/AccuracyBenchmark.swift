import ArgumentParser
import BeaconMeshAccuracy
import BeaconMeshCore
import Foundation

/// `beacon-bench accuracy`: how often BeaconMesh places a person in the right department on labelled real recordings.
struct AccuracyBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accuracy",
        abstract: "Score presence decisions on labelled recordings, or convert the public recordings into them.",
        subcommands: [AccuracyScoreCommand.self, AccuracyConvertCommand.self],
        defaultSubcommand: AccuracyScoreCommand.self)
}

/// `beacon-bench accuracy score FOLDER…`: replays each recording in virtual time and prints the scoreboard.
struct AccuracyScoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "score",
        abstract:
            "Replay labelled recordings (folders with layout.csv, truth.csv and one btsnoop capture per node) through the scanner pipeline and the presence engine in virtual time, and score every second against the truth."
    )

    @Argument(help: "Recording folders (as `accuracy convert` writes them).")
    var recordings: [String]

    @Flag(help: "Also score the naive rules on the same packets: the strongest node per second, and with a 3-s confirmation.")
    var baseline = false

    @Flag(help: "Print the confusion matrix of each recording and of the total (seconds by true and decided department).")
    var confusion = false

    @Flag(
        help:
            "Print, per second, the truth, the decision and each department's strongest reported RSSI (surveyed decisions too, when a survey decides)."
    )
    var trace = false

    @Option(
        name: .customLong("survey"),
        help:
            "A recording folder to survey the store with (repeatable): its samples fit the store, and the recordings scored are also decided from that fit."
    )
    var surveys: [String] = []

    @Flag(help: "Also decide each recording from a survey of all the others given (leave one recording out).")
    var leaveOneOut = false

    @Option(help: "Shift every RSSI of the recordings scored by this many dB (a weaker or stronger phone than the survey's).")
    var shift: Double = 0

    @Option(help: "The presence switchMargin to replay with, in dB (default: the contract's 4).")
    var switchMargin: Double?

    @Option(help: "The presence switchDwell to replay with (default: the contract's 3s).")
    var switchDwell: String?

    func validate() throws {
        if leaveOneOut && !surveys.isEmpty {
            throw ValidationError("--leave-one-out surveys from the recordings themselves: drop --survey")
        }
        if leaveOneOut && recordings.count < 2 { throw ValidationError("--leave-one-out needs two recordings or more") }
        if let switchDwell, DurationText.parse(switchDwell) == nil {
            throw ValidationError("--switch-dwell must be a duration such as 3s or 1500ms, not '\(switchDwell)'")
        }
    }

    func run() throws {
        var scoreboard = Scoreboard(baselines: baseline)
        scoreboard.tracing = trace
        var rules = PresenceRules()
        if let switchMargin { rules.switchMargin = switchMargin }
        if let switchDwell { rules.switchDwell = DurationText.parse(switchDwell)! }
        if leaveOneOut {
            scoreboard = try AccuracySurvey.leavingOneOut(recordings, rules: rules, shift: shift, tracing: trace)
        }
        var surveyed: PresenceReplay?
        if !surveys.isEmpty {
            let fit = try AccuracySurvey.fit(surveys, rules: rules)
            print(fit.report + "\n")
            surveyed = PresenceReplay(rules: rules, surveys: [fit.fit.store: fit.fit], rssiShift: shift)
        }
        for folder in recordings where !leaveOneOut {
            try scoreboard.add(
                LabelledRecording.load(folder: folder), replay: PresenceReplay(rules: rules, rssiShift: shift), surveyed: surveyed)
        }
        for trace in scoreboard.traces { print(trace + "\n") }
        print(scoreboard.table)
        let fitness = scoreboard.rows.compactMap { row in
            row.surveyFitness.map { "\(row.recording) \(Int(($0.share * 100).rounded())) %\($0.isStale ? " (stale)" : "")" }
        }
        if !fitness.isEmpty { print("\nreadings that fit the survey, recent share: " + fitness.joined(separator: ", ")) }
        if confusion {
            print("")
            print(scoreboard.confusionTables())
        }
    }
}

/// `beacon-bench accuracy convert philotuxo|sal FILE… --to FOLDER`: the public recordings as labelled recordings.
struct AccuracyConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert public labelled BLE recordings into folders `accuracy score` reads (one per file).",
        discussion: """
            philotuxo: a track of the Position-Annotated BLE RSSI Dataset (trk/*_all_sensors.mbd; CC0): 4 receiver groups \
            are departments 1–4, the truth is the group nearest the annotated position. sal: a measurement of the SAL \
            Autarkic Localization dataset (Dataset/*.csv; CC BY 4.0, Karoliny et al., Silicon Austria Labs): inside is \
            department 1, outside department 2.
            """)

    enum Source: String, ExpressibleByArgument, CaseIterable {
        case philotuxo, sal
    }

    @Argument(help: "The kind of recording: philotuxo or sal.")
    var source: Source

    @Argument(help: "The recording files.")
    var files: [String]

    @Option(help: "The folder to write the recordings into.")
    var to: String

    @Option(help: "philotuxo only: all (12 receivers, 3 per department) or pi (one radio per department).")
    var radios: String = "all"

    func validate() throws {
        guard PhilotuxoTrack.Radios(rawValue: radios) != nil else {
            throw ValidationError("--radios must be all or pi, not '\(radios)'")
        }
    }

    func run() throws {
        for file in files {
            let recording =
                switch source {
                case .philotuxo: try PhilotuxoTrack.convert(path: file, radios: PhilotuxoTrack.Radios(rawValue: radios)!)
                case .sal: try SALMeasurement.convert(path: file)
                }
            print(try recording.write(to: to))
        }
    }
}
