import BeaconMeshAccuracy
import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

/// `beacon-bench accuracy score --trace`: a line per second of each decider BeaconMesh runs, surveyed decisions too,
/// so that a surveyed store's flapping can be read second by second.
@Suite("The scoreboard's trace")
struct ScoreboardTraceTests {
    @Test("leaving one out, each recording is traced unsurveyed and surveyed; a trace's unmarked seconds are its right share")
    func surveyedTrace() throws {
        let files = try ScoreboardFloorTests.files(ScoreboardFloorTests.sal, suffix: ".csv", containing: "walk")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let written = try files.map { try SALMeasurement.convert(path: $0).write(to: folder) }
        let board = try AccuracySurvey.leavingOneOut(written, tracing: true)
        #expect(board.traces.count == 2 * written.count)
        for row in board.rows {
            for decider in [Scoreboard.Decider.beaconMesh, .surveyed] {
                let trace = try #require(board.traces.first { $0.hasPrefix("\(row.recording) ") && $0.contains(", \(decider.rawValue): ") })
                let seconds = trace.split(separator: "\n").dropFirst()
                let right = seconds.filter { !$0.contains("✗") }.count
                let score = try #require(row.scores[decider])
                #expect(abs(Double(right) / Double(seconds.count) - score.rightShare) < 0.01, "\(decider.rawValue)\n\(trace)")
            }
        }
    }
}
