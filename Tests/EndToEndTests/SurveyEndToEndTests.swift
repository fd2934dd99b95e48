import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshTesting
import Foundation
import Testing

/// The survey commands as a store's IT person runs them, on a SQLite registry seeded with the samples a walk would
/// have kept: `survey fit` learns and keeps a fit and reports its quality, `survey show` says what is kept, a fit
/// with a department walked too briefly exits 1 and keeps the old fit, and `survey clear` deletes it all.
@Suite("Survey commands end to end")
struct SurveyEndToEndTests {
    @Test("fit keeps a fit and reports it; show --json prints it; a too-thin department exits 1 keeping the fit; clear deletes")
    func fitShowClear() async throws {
        let database = try Mesh.temporaryDirectory() + "/mesh.sqlite"
        let registry = try SQLiteRegistry(path: database)
        // Each of three departments walked twice for 30 s, a minute apart, with beacon 1; another store's samples.
        var samples: [SurveySample] = []
        for (index, department) in [UInt16(10), 20, 30].enumerated() {
            for stretch in 0..<2 {
                samples += Self.walk(department: department, from: 1_000_000 + Int64(index * 200_000 + stretch * 100_000), seconds: 30)
            }
        }
        try registry.addSurveySamples(samples + Self.walk(store: 2, department: 10, from: 0, seconds: 25))
        let store = ["--store", "1", "--db", database]

        let fit = try await Self.run(["survey", "fit"] + store)
        #expect(fit.status == .exited(0), "\(fit.transcript)")
        #expect(
            fit.stdout.first?.hasPrefix("Store 1: fit learnt") == true
                && fit.stdout.first?.hasSuffix("from 180 s of samples in 3 departments") == true)
        #expect(fit.stdout.contains { $0.hasPrefix("DEPARTMENT  SECONDS  STRETCHES  RIGHT") }, "\(fit.transcript)")
        #expect(fit.stdout.contains { $0.hasPrefix("WAS \\ DECIDED  10") }, "\(fit.transcript)")
        let kept = try #require(try registry.surveyFit(store: 1), "survey fit kept no fit")
        #expect(kept.departments == [10, 20, 30] && kept.samples == 180)

        let json = try await Self.run(["survey", "fit", "--json"] + store)
        #expect(json.status == .exited(0), "\(json.transcript)")
        let quality = try Self.object(json.stdout)
        #expect(quality["store"] as? Int == 1)
        let rows = try #require(quality["samples"] as? [[String: Any]])
        #expect(rows.map { $0["department"] as? Int } == [10, 20, 30])
        #expect(rows.allSatisfy { $0["seconds"] as? Int == 60 && $0["stretches"] as? Int == 2 })
        let confusion = try #require(quality["confusion"] as? [String: Any])
        #expect(confusion["departments"] as? [Int] == [10, 20, 30])
        let matrix = try #require(confusion["rows"] as? [[Int]])
        #expect(matrix.count == 3 && matrix.map { $0.reduce(0, +) } == [60, 60, 60], "every held-out second decided once")
        #expect(quality["needsWalking"] is [Any])
        let refit = try #require(try registry.surveyFit(store: 1))
        #expect((quality["fittedAt"] as? NSNumber)?.int64Value == refit.fittedAt.milliseconds)
        #expect((quality["accuracy"] as? NSNumber)?.doubleValue == refit.accuracy)

        let show = try await Self.run(["survey", "show", "--json"] + store)
        #expect(show.status == .exited(0), "\(show.transcript)")
        #expect(
            show.stdout == [
                #"{"store":1,"samples":[{"department":10,"seconds":60,"sources":{"walk":60,"reference":0,"checkin":0}},"#
                    + #"{"department":20,"seconds":60,"sources":{"walk":60,"reference":0,"checkin":0}},"#
                    + #"{"department":30,"seconds":60,"sources":{"walk":60,"reference":0,"checkin":0}}],"#
                    + #""fit":{"fittedAt":\#(refit.fittedAt.milliseconds),"accuracy":\#(refit.accuracy)}}"#
            ])

        // Five seconds of a fourth department: too few to fit; the fit of the three stays.
        try registry.addSurveySamples(Self.walk(department: 40, from: 2_000_000, seconds: 5))
        let thin = try await Self.run(["survey", "fit"] + store)
        #expect(thin.status == .exited(1), "\(thin.transcript)")
        #expect(
            thin.stderr == [
                "beacon-coordinator: department 40 of store 1 has 5 s of survey samples, fewer than 20 s: walk it more"
            ])
        #expect(try registry.surveyFit(store: 1) == refit, "the old fit is kept")

        let table = try await Self.run(["survey", "show"] + store)
        #expect(table.stdout.first == "Store 1: 185 s of survey samples in 4 departments", "\(table.transcript)")
        #expect(table.stdout.contains("40          5"))

        let clear = try await Self.run(["survey", "clear"] + store)
        #expect(clear.status == .exited(0) && clear.stdout == ["store 1: deleted 185 survey samples and the fit"], "\(clear.transcript)")
        let empty = try await Self.run(["survey", "show", "--json"] + store)
        #expect(empty.stdout == [#"{"store":1,"samples":[],"fit":null}"#])
        #expect(try registry.surveySeconds(store: 2) == [10: 25], "another store's samples stay")

        let bad = try await Self.run(["survey", "fit", "--store", "70000", "--db", database])
        #expect(bad.status == .exited(2))
        #expect(bad.stderr == ["beacon-coordinator: The value '70000' is invalid for '--store <store>'"], "\(bad.transcript)")
    }

    /// `seconds` samples of beacon 1 in `department`, one a second from `start`: the department's own node hears it
    /// loudest.
    private static func walk(store: UInt16 = 1, department: UInt16, from start: Int64, seconds: Int) -> [SurveySample] {
        (0..<seconds).map { second in
            var readings: [SurveyNode: Double] = [:]
            for node: UInt16 in [10, 20, 30, 40] {
                readings[SurveyNode(department: node, node: "a")] =
                    node == department ? -58 - Double(second % 6) : -83 + Double((second + Int(node)) % 5)
            }
            return SurveySample(
                store: store, beacon: BeaconKey("ibeacon:\(Mesh.uuid):9:1")!, department: department,
                at: Timestamp(milliseconds: start + Int64(second) * 1000), readings: readings)
        }
    }

    /// Runs `beacon-coordinator` with `arguments` to its exit.
    private static func run(_ arguments: [String]) async throws -> (
        status: TestProcess.ExitStatus?, stdout: [String], stderr: [String], transcript: String
    ) {
        let process = try Mesh.program("beacon-coordinator", arguments)
        let status = await process.waitForExit(timeout: .seconds(60))
        return (status, process.stdoutLines, process.stderrLines, process.transcript)
    }

    /// The one JSON object a command printed.
    private static func object(_ lines: [String]) throws -> [String: Any] {
        guard lines.count == 1, let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any] else {
            throw TestSupportError("not one JSON object: \(lines)")
        }
        return object
    }
}
