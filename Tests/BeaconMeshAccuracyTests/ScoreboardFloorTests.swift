import BeaconMeshAccuracy
import BeaconMeshTesting
import Foundation
import Testing

/// The scoreboard on the shared labelled recordings (`../shared/data/accuracy`), converted afresh: floors that fail
/// on a regression of BeaconMesh's decisions, with the contract's default presence settings. The figures the floors
/// sit under are in `Sources/beacon-bench/README.md`, "Presence accuracy on real radio" (`beacon-bench accuracy score
/// --baseline`).
@Suite("Presence accuracy on labelled recordings", .serialized)
struct ScoreboardFloorTests {
    /// Converts `files` of `kind` into a fresh folder and scores every recording with the naive rules beside.
    static func scoreboard(_ convert: (String) throws -> ConvertedRecording, _ files: [String]) throws -> Scoreboard {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("accuracy-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var scoreboard = Scoreboard(baselines: true)
        for file in files {
            let written = try convert(file).write(to: folder)
            try scoreboard.add(LabelledRecording.load(folder: written), replay: PresenceReplay())
        }
        return scoreboard
    }

    static func files(_ folder: String, suffix: String, containing: String = "") throws -> [String] {
        let directory = try SharedTestData.accuracyDirectory().appendingPathComponent(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(suffix) && (containing.isEmpty || $0.contains(containing)) }.sorted()
        #expect(!names.isEmpty, "no recordings in \(directory.path)")
        return names.map { directory.appendingPathComponent($0).path }
    }

    static let philotuxo = "philotuxo__Position-Annotated-BLE-RSSI-Dataset/trk"
    static let sal = "juliankaroliny__SAL-Autarkic-Localization-RSSI-BLE-Dataset/Dataset"

    @Test(
        "open-plan office, 12 receivers in 4 departments: right more often than both naive rules, fewer changes than the 3-s confirmation")
    func philotuxoAllReceivers() throws {
        let board = try Self.scoreboard({ try PhilotuxoTrack.convert(path: $0) }, Self.files(Self.philotuxo, suffix: "_all_sensors.mbd"))
        let total = board.total
        let mesh = try #require(total[.beaconMesh])
        #expect(board.rows.count == 9)
        #expect(mesh.trueChanges == 17)
        #expect(mesh.rightShare >= 0.79, "\(board.table)")
        #expect(mesh.wrongShare <= 0.16, "\(board.table)")
        #expect(mesh.rightShare > total[.strongestNode]!.rightShare && mesh.rightShare > total[.confirmed3s]!.rightShare, "\(board.table)")
        #expect(mesh.changes <= total[.confirmed3s]!.changes, "\(board.table)")
    }

    @Test("open-plan office, one radio per department: right more often than both naive rules, no more changes than the 3-s confirmation")
    func philotuxoOneRadio() throws {
        let board = try Self.scoreboard(
            { try PhilotuxoTrack.convert(path: $0, radios: .pi) }, Self.files(Self.philotuxo, suffix: "_all_sensors.mbd"))
        let total = board.total
        let mesh = try #require(total[.beaconMesh])
        #expect(mesh.rightShare >= 0.64, "\(board.table)")
        #expect(mesh.rightShare > total[.strongestNode]!.rightShare && mesh.rightShare > total[.confirmed3s]!.rightShare, "\(board.table)")
        #expect(mesh.changes <= total[.confirmed3s]!.changes, "\(board.table)")
    }

    @Test("a person walking in and out of a test chamber: floors on right, wrong and changes")
    func salWalk() throws {
        let board = try Self.scoreboard({ try SALMeasurement.convert(path: $0) }, Self.files(Self.sal, suffix: ".csv", containing: "walk"))
        let total = board.total
        let mesh = try #require(total[.beaconMesh])
        #expect(mesh.trueChanges == 8)
        #expect(mesh.rightShare >= 0.91, "\(board.table)")
        #expect(mesh.wrongShare <= 0.06, "\(board.table)")
        #expect(mesh.rightShare >= total[.confirmed3s]!.rightShare - 0.01, "\(board.table)")
        #expect(mesh.changes <= total[.confirmed3s]!.changes, "\(board.table)")
    }

    @Test("a car driving in and out of a test chamber: floors on right and changes")
    func salCar() throws {
        let board = try Self.scoreboard({ try SALMeasurement.convert(path: $0) }, Self.files(Self.sal, suffix: ".csv", containing: "car"))
        let total = board.total
        let mesh = try #require(total[.beaconMesh])
        #expect(mesh.trueChanges == 66)
        #expect(mesh.rightShare >= 0.72, "\(board.table)")
        #expect(mesh.changes <= total[.confirmed3s]!.changes, "\(board.table)")
    }
}
