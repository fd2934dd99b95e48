import ArgumentParser
import BeaconMeshAccuracy
import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService

/// `beacon-coordinator survey import DIR --store N --db …`: a survey from a labelled recording — the samples a live
/// survey would have kept, had the recording's walker marked where its truth says they were.
struct SurveyImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the survey samples of a labelled recording (layout.csv, truth.csv, one btsnoop capture per node).",
        discussion: """
            DIR/layout.csv (node,department,capture) names each of the store's nodes, its department and a btsnoop \
            capture of what it heard; DIR/truth.csv (beacon,from,to,department) says where each beacon truly was \
            (epoch ms spans). The captures are replayed through the scanner's pipeline and the coordinator's readings as \
            the store's nodes would have heard them, and a sample is kept for each second a beacon was in a department. \
            Nothing is stored unless the whole recording reads.
            """)

    @Argument(help: ArgumentHelp("The recording's folder.", valueName: "DIR")) var folder: String
    @OptionGroup var target: SurveyCommand.Target

    func run() throws {
        var recording: LabelledRecording
        let samples: [SurveySample]
        do {
            recording = try LabelledRecording.load(folder: folder)
            recording.store = target.store
            samples = try PresenceReplay().surveySamples(recording)
        } catch {
            throw UsageError("\(error)")
        }
        guard !samples.isEmpty else {
            throw UsageError("\(folder): no node heard a beacon of truth.csv while the truth placed it in a department")
        }
        try target.database.use { registry in try registry.addSurveySamples(samples) }
        var seconds: [UInt16: Int] = [:]
        for sample in samples { seconds[sample.department, default: 0] += 1 }
        print("store \(target.store): \(samples.count) s of survey samples added from \(recording.name)")
        for department in seconds.keys.sorted() { print("  department \(department): \(seconds[department]!) s") }
    }
}
