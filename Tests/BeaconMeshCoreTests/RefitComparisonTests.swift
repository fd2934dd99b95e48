import Testing

@testable import BeaconMeshCore

/// A refit judged on the truth gathered since the installed fit: installed when it decides that truth at least as
/// well, refused when worse, and nothing to judge by when there is no new truth.
@Suite("Survey refit against the installed fit")
struct RefitComparisonTests {
    static let fittedAt = Timestamp(milliseconds: 1_763_769_600_000 + 3_600_000)

    /// `samples` of the house, moved `hours` after the first walk, with departments 20 and 30 relabelled by `label`.
    static func samples(
        stretches: Int, seconds: Int = 40, hours: Int64, seed: UInt64, label: (UInt16) -> UInt16 = { $0 }
    ) -> [SurveySample] {
        SurveyHouse.samples(seconds: seconds, stretches: stretches, seed: seed).map { sample in
            var moved = sample
            moved.at = Timestamp(milliseconds: sample.at.milliseconds + hours * 3_600_000)
            moved.department = label(sample.department)
            return moved
        }
    }

    static func swapped(_ department: UInt16) -> UInt16 { department == 20 ? 30 : department == 30 ? 20 : department }

    @Test("the store rebuilt (upstairs and the kitchen swapped): the refit decides the new walks better and is installed")
    func rebuiltStore() throws {
        let old = Self.samples(stretches: 1, hours: 0, seed: 1)
        let installed = try SurveyTraining(samples: old, store: 1).fit(at: Self.fittedAt).fit
        let rebuilt = Self.samples(stretches: 4, hours: 2, seed: 2, label: Self.swapped)
        let training = try SurveyTraining(samples: old + rebuilt, store: 1)
        let comparison = try #require(training.compare(with: installed, at: Self.fittedAt + .seconds(7200)))
        #expect(comparison.seconds == rebuilt.count)
        #expect(comparison.installed < 0.5, "the old fit calls the new upstairs the kitchen")
        #expect(comparison.refit > 0.9)
        #expect(!comparison.isWorse)
    }

    @Test("a refit that learnt from samples contradicting the new truth decides it worse, and is refused")
    func badRefit() throws {
        let clean = Self.samples(stretches: 2, hours: 0, seed: 3)
        let installed = try SurveyTraining(samples: clean, store: 1).fit(at: Self.fittedAt).fit
        // The registry now holds a walk marked the wrong way round (20 for 30) and one right walk since the fit.
        let wrong = Self.samples(stretches: 2, hours: 0, seed: 4, label: Self.swapped)
        let since = Self.samples(stretches: 1, hours: 2, seed: 5)
        let training = try SurveyTraining(samples: wrong + since, store: 1)
        let comparison = try #require(training.compare(with: installed, at: Self.fittedAt + .seconds(7200)))
        #expect(comparison.seconds == since.count)
        #expect(comparison.installed > 0.9)
        #expect(comparison.isWorse)
        let error = SurveyFitError.worseThanInstalled(store: 1, comparison)
        #expect(error.description.hasPrefix("keeping store 1's installed fit: of the 120 s of samples gathered since it was fitted"))
    }

    @Test("no samples since the installed fit (a refit of the same walks, or an imported older walk): nothing to judge by")
    func nothingNew() throws {
        let old = Self.samples(stretches: 2, hours: 0, seed: 6)
        let installed = try SurveyTraining(samples: old, store: 1).fit(at: Self.fittedAt).fit
        let training = try SurveyTraining(samples: old, store: 1)
        #expect(training.compare(with: installed, at: Self.fittedAt) == nil)
        let few = Array(Self.samples(stretches: 1, hours: 2, seed: 7).prefix(SurveyTraining.minimumSeconds - 1))
        #expect(try SurveyTraining(samples: old + few, store: 1).compare(with: installed, at: Self.fittedAt) == nil)
    }
}
