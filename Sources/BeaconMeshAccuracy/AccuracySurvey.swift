import BeaconMeshCore

/// A store surveyed from labelled recordings: the samples a live survey would have kept while walking them, and
/// the fit learnt from those (for the scoreboard's surveyed decisions).
public enum AccuracySurvey {
    /// The fit of the store of the recordings in `folders`, with its quality report.
    public static func fit(_ folders: [String], rules: PresenceRules = PresenceRules()) throws -> (fit: SurveyFit, report: String) {
        var samples: [SurveySample] = []
        var store: UInt16 = 1
        for folder in folders {
            let recording = try LabelledRecording.load(folder: folder)
            store = recording.store
            samples += try PresenceReplay(rules: rules).surveySamples(recording)
        }
        let (fit, quality) = try SurveyTraining(samples: samples, store: store).fit(at: Timestamp(milliseconds: 0))
        let walk = quality.needsWalking.map { "department \($0.department): \($0.why)" }
        return (
            fit,
            "survey of store \(store) from \(folders.count) recording(s): \(samples.count) s of samples, \(Int((quality.accuracy * 1000).rounded()) / 10).\(Int((quality.accuracy * 1000).rounded()) % 10) % right as estimated (each 15 s left out, through the belief)"
                + (walk.isEmpty ? "" : "; walk again: " + walk.joined(separator: "; "))
        )
    }

    /// The scoreboard of `folders`, each recording also decided from a survey of all the others (leave one
    /// recording out: the seconds scored are never the seconds surveyed), with `shift` dB added to the readings of
    /// the recording scored.
    public static func leavingOneOut(
        _ folders: [String], rules: PresenceRules = PresenceRules(), shift: Double = 0, tracing: Bool = false
    ) throws -> Scoreboard {
        let recordings = try folders.map { try LabelledRecording.load(folder: $0) }
        let samples = try recordings.map { try PresenceReplay(rules: rules).surveySamples($0) }
        var scoreboard = Scoreboard(baselines: true)
        scoreboard.tracing = tracing
        for (index, recording) in recordings.enumerated() {
            let others = samples.indices.filter { $0 != index }.flatMap { samples[$0] }
            let fit = try SurveyTraining(samples: others, store: recording.store).fit(at: Timestamp(milliseconds: 0)).fit
            try scoreboard.add(
                recording, replay: PresenceReplay(rules: rules, rssiShift: shift),
                surveyed: PresenceReplay(rules: rules, surveys: [recording.store: fit], rssiShift: shift))
        }
        return scoreboard
    }
}
