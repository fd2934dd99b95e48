import Foundation
import Testing

@testable import BeaconMeshCore

/// A house as a survey hears it: downstairs (10), upstairs (20) and the kitchen (30), one node each; the downstairs
/// node hears a person upstairs through the floor louder than the upstairs node does.
enum SurveyHouse {
    static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
    static let surveyor = BeaconKey.iBeacon(uuid: uuid, major: 1, minor: 9)

    /// What the three nodes hear of a person in each department (dBm; absent: not heard).
    static let sounds: [UInt16: [UInt16: Double]] = [
        10: [10: -55, 20: -80, 30: -72],
        20: [10: -62, 20: -66],
        30: [10: -75, 30: -55],
    ]

    static func node(_ department: UInt16) -> SurveyNode { SurveyNode(department: department, node: "a") }

    /// `seconds` samples per department in each of `stretches` stretches, readings jittered by up to ±`jitter` dB.
    static func samples(seconds: Int = 40, stretches: Int = 2, jitter: Double = 3, seed: UInt64 = 7) -> [SurveySample] {
        var random = SplitMix64(seed: seed)
        var samples: [SurveySample] = []
        var at: Int64 = 1_763_769_600_000
        for _ in 0..<stretches {
            for department in [10, 20, 30] as [UInt16] {
                for _ in 0..<seconds {
                    at += 1000
                    let readings = Dictionary(
                        uniqueKeysWithValues: sounds[department]!.map { (node($0.key), $0.value + random.uniform(-jitter, jitter)) })
                    samples.append(
                        SurveySample(
                            store: 1, beacon: surveyor, department: department, at: Timestamp(milliseconds: at), readings: readings))
                }
                at += 10_000
            }
        }
        return samples
    }

    static func fit() throws -> SurveyFit { try SurveyTraining(samples: samples(), store: 1).fit(at: Timestamp(milliseconds: 1)).fit }
}

@Suite("Survey fit")
struct SurveyFitTests {
    @Test("a fit of a walked house tells upstairs from downstairs where the loudest node is wrong")
    func tellsFloorsApart() throws {
        let fit = try SurveyHouse.fit()
        let upstairs = fit.probabilities([SurveyHouse.node(10): -61, SurveyHouse.node(20): -67])
        #expect(upstairs[20]! > 0.9)
        let downstairs = fit.probabilities([SurveyHouse.node(10): -56, SurveyHouse.node(20): -79, SurveyHouse.node(30): -71])
        #expect(downstairs[10]! > 0.9)
        #expect(abs(upstairs.values.reduce(0, +) - 1) < 1e-9)
    }

    @Test("a phone 8 dB weaker or stronger than the surveyor's is decided the same")
    func shiftedReadings() throws {
        let fit = try SurveyHouse.fit()
        for shift in [-8.0, 0, 8] {
            let upstairs = fit.probabilities([SurveyHouse.node(10): -61 + shift, SurveyHouse.node(20): -67 + shift])
            #expect(upstairs[20]! > 0.9, "shift \(shift)")
        }
    }

    @Test("the quality report holds out each block of seconds and counts every held-out second")
    func quality() throws {
        let training = try SurveyTraining(samples: SurveyHouse.samples(), store: 1)
        #expect(training.stretches == 6)
        let (fit, quality) = try training.fit(at: Timestamp(milliseconds: 5))
        #expect(quality.samples == [80, 80, 80])
        #expect(quality.stretches == [2, 2, 2])
        #expect(quality.confusion.reduce(0, +) == 240)
        #expect(quality.accuracy > 0.95)
        #expect(fit.accuracy == quality.accuracy)
        #expect(quality.needsWalking.isEmpty)
    }

    @Test("a department walked once is estimated from its other seconds, and is named to walk again only for too few seconds")
    func walkedOnce() throws {
        let (_, quality) = try SurveyTraining(samples: SurveyHouse.samples(seconds: 30, stretches: 1), store: 1).fit(
            at: Timestamp(milliseconds: 5))
        // Each block of 15 s is held out with its stretch's next 5 s, the rest of the stretch stays in the fold: the
        // estimate is of the department's own sound, not "nothing left of it" (leave-one-stretch-out said 0 %).
        #expect(quality.confusion.reduce(0, +) == 90)
        #expect(quality.accuracy > 0.9)
        // Half a minute each: the report says to walk each for longer.
        #expect(quality.needsWalking.map(\.department) == [10, 20, 30])
        #expect(quality.needsWalking.allSatisfy { $0.why == "only 30 s: walk it for a minute or more" })
        // A minute each, walked once and decided well: nothing to walk again.
        let (_, minute) = try SurveyTraining(samples: SurveyHouse.samples(seconds: 60, stretches: 1), store: 1).fit(
            at: Timestamp(milliseconds: 5))
        #expect(minute.needsWalking.isEmpty)
    }

    @Test("a department with fewer than 20 s of samples is refused by name")
    func tooFew() {
        let samples =
            SurveyHouse.samples().filter { $0.department != 30 }
            + SurveyHouse.samples(seconds: 19, stretches: 1).filter {
                $0.department == 30
            }
        #expect(throws: SurveyFitError.tooFewSamples(store: 1, department: 30, seconds: 19)) {
            try SurveyTraining(samples: samples, store: 1)
        }
        #expect(throws: SurveyFitError.noSamples(store: 2)) { try SurveyTraining(samples: samples, store: 2) }
    }

    @Test("a fit's bytes read back to the same fit; cut or altered bytes do not")
    func bytes() throws {
        let fit = try SurveyHouse.fit()
        let bytes = fit.encoded()
        #expect(SurveyFit(encoded: bytes) == fit)
        #expect(SurveyFit(encoded: Array(bytes.dropLast())) == nil)
        #expect(SurveyFit(encoded: bytes + [0]) == nil)
        var version = bytes
        version[4] = 2
        #expect(SurveyFit(encoded: version) == nil)
    }

    @Test("sample readings round-trip through their text, and malformed text is refused")
    func readingsText() {
        let sample = SurveyHouse.samples(seconds: 1, stretches: 1)[0]
        #expect(
            SurveySample.readings(fromText: sample.readingsText)?.mapValues { ($0 * 10).rounded() }
                == sample.readings.mapValues { ($0 * 10).rounded() })
        for bad in ["10/a", "10/A=-50", "x/a=-50", "10/a=abc", "10/a=-500", "70000/a=-50"] {
            #expect(SurveySample.readings(fromText: bad) == nil, "\(bad)")
        }
        #expect(SurveySample.readings(fromText: "") == [:])
    }

    @Test("exp, log and the inverse of a positive-definite matrix are right")
    func math() {
        for x in [-20.0, -3.3, -0.5, 0, 0.25, 1, 7.5] {
            let e = SurveyMath.exp(x)
            #expect(abs(SurveyMath.log(e) - x) < 1e-9)
        }
        // Against the platform's own, over the whole range (relative error), and past its ends.
        for x in stride(from: -707.9, through: 709, by: 0.37) {
            #expect(abs(SurveyMath.exp(x) / Foundation.exp(x) - 1) < 1e-13, "e^\(x)")
        }
        #expect(SurveyMath.exp(-1000) >= 0 && SurveyMath.exp(-1000) < 1e-300)
        for exponent in stride(from: -300.0, through: 300, by: 0.73) {
            let x = Foundation.pow(10, exponent)
            #expect(abs(SurveyMath.log(x) - Foundation.log(x)) <= 1e-13 * max(1, abs(Foundation.log(x))), "ln \(x)")
        }
        #expect(SurveyMath.log(0) == -.infinity)
        #expect(abs(SurveyMath.exp(1) - 2.718_281_828_459_045) < 1e-12)
        #expect(abs(SurveyMath.log(10) - 2.302_585_092_994_046) < 1e-12)
        let matrix = [4.0, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2]
        let inverse = SurveyMath.inverseOfPositiveDefinite(matrix, size: 3)!
        for row in 0..<3 {
            for column in 0..<3 {
                let product = (0..<3).reduce(0.0) { $0 + matrix[row * 3 + $1] * inverse[$1 * 3 + column] }
                #expect(abs(product - (row == column ? 1 : 0)) < 1e-12)
            }
        }
        #expect(SurveyMath.inverseOfPositiveDefinite([1, 2, 2, 1], size: 2) == nil)
    }

    @Test("live readings that stop fitting the survey make it stale; readings like the survey's do not")
    func fitness() {
        var fitness = SurveyFitness()
        for _ in 0..<(SurveyFitness.minimumChecks - 1) { fitness.record(fits: false) }
        #expect(!fitness.isStale)
        fitness.record(fits: false)
        #expect(fitness.isStale)
        var fitting = SurveyFitness()
        for index in 0..<1000 { fitting.record(fits: index % 10 != 0) }
        #expect(!fitting.isStale)
        #expect(fitting.share > 0.85)
    }
}
