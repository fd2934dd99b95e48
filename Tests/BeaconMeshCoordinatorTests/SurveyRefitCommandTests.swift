import ArgumentParser
import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Foundation
import Testing

@testable import beacon_coordinator

/// `survey fit` on a store that has a fit: the refit is judged on the samples gathered since, and a bad one is not
/// installed (exit 1, one line, the installed fit kept).
@Suite("beacon-coordinator survey fit: a bad refit is not installed")
struct SurveyRefitCommandTests {
    static let front = SurveyNode(department: 10, node: "a")
    static let back = SurveyNode(department: 20, node: "a")

    /// `seconds` samples of each department in one stretch from `start`: each department's own node hears it loudest.
    /// `swapped`: marked the wrong way round.
    static func walk(from start: Timestamp, seconds: Int = 40, swapped: Bool = false) -> [SurveySample] {
        var samples: [SurveySample] = []
        for (offset, department) in ([10, 20] as [UInt16]).enumerated() {
            for second in 0..<seconds {
                let jitter = 3 * sin(Double(second * 7 + offset))
                let near = -55 + jitter
                let far = -76 - jitter
                let readings = department == 10 ? [front: near, back: far] : [front: far, back: near]
                let marked: UInt16 = swapped ? (department == 10 ? 20 : 10) : department
                let at = start + .seconds(Int64(offset * (seconds + 30) + second))
                samples.append(
                    SurveySample(
                        store: 1, beacon: .iBeacon(uuid: BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!, major: 1, minor: 9),
                        department: marked, at: at, readings: readings))
            }
        }
        return samples
    }

    @Test("a walk marked the wrong way round, then a right one since the fit: survey fit exits 1 keeping the installed fit")
    func badRefitRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-refit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/mesh.sqlite"
        let now = WallClock.now()
        let registry = try SQLiteRegistry(path: path)
        let clean = Self.walk(from: now - .seconds(3 * 3600)) + Self.walk(from: now - .seconds(3 * 3600 - 600))
        let installed = try SurveyTraining(samples: clean, store: 1).fit(at: now - .seconds(2 * 3600)).fit
        try registry.saveSurveyFit(installed)
        try registry.addSurveySamples(Self.walk(from: now - .seconds(4 * 3600), swapped: true) + Self.walk(from: now - .seconds(3600)))

        var command = try #require(
            try BeaconCoordinator.parseAsRoot(["survey", "fit", "--store", "1", "--db", path]) as? SurveyCommand.Fit)
        do {
            try command.run()
            Issue.record("the bad refit was installed")
        } catch {
            let message = BeaconCoordinator.message(for: error)
            #expect(
                message.hasPrefix(
                    "keeping store 1's installed fit: of the 80 s of samples gathered since it was fitted, the refit decides 0 % right, the installed fit 100 %"
                ), "\(message)")
            #expect(!message.contains("\n"))
            #expect(BeaconCoordinator.exitCode(for: error) == .failure)
        }
        #expect(try registry.surveyFit(store: 1)?.fittedAt == installed.fittedAt)

        // The same store walked right since the fit: the refit is installed.
        _ = try registry.clearSurvey(store: 1)
        try registry.saveSurveyFit(installed)
        try registry.addSurveySamples(clean + Self.walk(from: now - .seconds(1800)) + Self.walk(from: now - .seconds(1200)))
        command = try #require(try BeaconCoordinator.parseAsRoot(["survey", "fit", "--store", "1", "--db", path]) as? SurveyCommand.Fit)
        try command.run()
        #expect(try registry.surveyFit(store: 1)?.fittedAt != installed.fittedAt)
    }
}
