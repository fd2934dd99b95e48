import ArgumentParser
import BeaconMeshCore

/// `beacon-bench survey-fit`: how long `survey fit` takes to learn a store (its estimate included) and how
/// large the fit it stores is, on a synthetic walk: each department's node hears the surveyor strongly, its
/// neighbours' faintly, the rest not at all.
struct SurveyFitBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "survey-fit", abstract: "Survey fit: seconds to learn a store from its samples, and the fit's size.")

    @Option(help: "Departments (one node each).")
    var departments: Int = 20

    @Option(help: "Seconds of samples in all (one sample a second).")
    var seconds: Int = 3_600

    @Option(help: "Stretches each department is walked in.")
    var stretches: Int = 3

    func run() throws {
        let samples = Self.samples(departments: departments, seconds: seconds / departments, stretches: stretches)
        let clock = ContinuousClock()
        let started = clock.now
        let training = try SurveyTraining(samples: samples, store: 1)
        let (fit, quality) = try training.fit(at: Timestamp(milliseconds: 0))
        let took = clock.now - started
        print("survey fit benchmark: \(departments) departments, \(samples.count) s of samples in \(training.stretches) stretches")
        print("  fit + its estimate            \(took)")
        print("  fit size                      \(fit.encoded().count) bytes")
        print("  accuracy                      \((quality.accuracy * 1000).rounded() / 10) %")
    }

    /// `seconds` samples per department in `stretches` stretches, readings jittered by up to ±4 dB.
    static func samples(departments: Int, seconds: Int, stretches: Int) -> [SurveySample] {
        var random = SystemRandomNumberGenerator()
        var samples: [SurveySample] = []
        var at: Int64 = 0
        let beacon = BeaconKey.iBeacon(uuid: BenchBeacons.uuid, major: 1, minor: 1)
        for _ in 0..<stretches {
            for department in 0..<departments {
                for _ in 0..<max(1, seconds / stretches) {
                    at += 1000
                    var readings: [SurveyNode: Double] = [:]
                    for (node, level) in [
                        (department, -58.0), ((department + 1) % departments, -80), ((department + departments - 1) % departments, -84),
                    ] {
                        readings[SurveyNode(department: UInt16(node), node: "a")] = level + Double.random(in: -4...4, using: &random)
                    }
                    samples.append(
                        SurveySample(
                            store: 1, beacon: beacon, department: UInt16(department), at: Timestamp(milliseconds: at), readings: readings))
                }
                at += 10_000
            }
        }
        return samples
    }

    /// A fit of a synthetic walk of `departments` departments, `seconds` per department.
    static func syntheticFit(departments: Int, seconds: Int) throws -> SurveyFit {
        try SurveyTraining(samples: samples(departments: departments, seconds: seconds, stretches: 2), store: 1)
            .fit(at: Timestamp(milliseconds: 0)).fit
    }
}
