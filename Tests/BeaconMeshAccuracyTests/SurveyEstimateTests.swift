import BeaconMeshAccuracy
import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

/// `survey fit`'s accuracy estimate against the truth (issue 51 item 3): a store surveyed with one walk, its
/// estimate beside how the fit then decides other walks of the same place it never saw (the real engine, replayed).
@Suite("The survey fit's estimate predicts unseen walks", .serialized)
struct SurveyEstimateTests {
    /// Converts `files` into a fresh folder; `body` gets their folders in the order given.
    static func converted(_ convert: (String) throws -> ConvertedRecording, _ files: [String], _ body: ([String]) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("estimate-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(try files.map { try convert($0).write(to: folder) })
    }

    /// The fit of `survey` estimates each of `walks` decided from it within `points` percentage points.
    static func expectPredicted(survey: String, walks: [String], within points: Double) throws {
        let (fit, report) = try AccuracySurvey.fit([survey])
        let replay = PresenceReplay(surveys: [fit.store: fit])
        for walk in walks {
            var board = Scoreboard(baselines: false)
            try board.add(LabelledRecording.load(folder: walk), replay: PresenceReplay(), surveyed: replay)
            let decided = try #require(board.total[.surveyed]).rightShare
            #expect(abs(fit.accuracy - decided) * 100 <= points, "estimate \(fit.accuracy), decided \(decided): \(walk)\n\(report)")
        }
    }

    @Test("an office walked once (every department once): the estimate is within 5 points of three other walks")
    func officeWalkedOnce() throws {
        let files = try ScoreboardFloorTests.files(ScoreboardFloorTests.philotuxo, suffix: "_all_sensors.mbd", containing: "straight_0")
        let chosen = ["straight_02", "straight_01", "straight_04", "straight_05"].map { name in files.first { $0.contains(name) }! }
        try Self.converted({ try PhilotuxoTrack.convert(path: $0) }, chosen) { folders in
            // Leave-one-stretch-out said 0 % here: the only stretch of each department, held out, left none of it.
            try Self.expectPredicted(survey: folders[0], walks: Array(folders.dropFirst()), within: 5)
        }
    }

    @Test("a corridor walked once: the estimate is within 5 points of the other walk")
    func corridorWalk() throws {
        let files = try ScoreboardFloorTests.files(ScoreboardFloorTests.sal, suffix: ".csv", containing: "walk_sensor_1")
        try Self.converted({ try SALMeasurement.convert(path: $0) }, files) { folders in
            try Self.expectPredicted(survey: folders[0], walks: [folders[1]], within: 5)
        }
    }
}
