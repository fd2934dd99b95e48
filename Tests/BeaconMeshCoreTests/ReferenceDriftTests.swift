import Testing

@testable import BeaconMeshCore

/// The drift check of a surveyed store's references (`ReferenceDrift`, the contract's `surveys[].drift`).
@Suite("Survey drift check on references")
struct ReferenceDriftTests {
    static let reference = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:7")!
    static let guest = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:1:8")!
    static let kitchen = SurveyNode(department: 10, node: "a")
    static let study = SurveyNode(department: 20, node: "b")
    static let start = Timestamp(milliseconds: 1_763_769_600_000)

    static func sample(_ beacon: BeaconKey = reference, at second: Int, _ readings: [SurveyNode: Double]) -> SurveySample {
        SurveySample(store: 1, beacon: beacon, department: 10, at: start + .seconds(second), readings: readings)
    }

    /// A baseline of the reference heard at -60 in the kitchen and -75 in the study, from samples before the fit.
    static func checked() -> ReferenceDrift {
        var samples = (0..<20).map { sample(at: $0 * 10, [kitchen: $0 % 2 == 0 ? -59 : -61, study: -75]) }
        samples.append(sample(at: 500, [kitchen: -20, study: -20]))  // after the fit: not its baseline
        samples.append(sample(guest, at: 10, [kitchen: -90]))  // not a reference
        let baseline = ReferenceDrift.baseline(from: samples, references: [reference], before: start + .seconds(300))
        #expect(baseline == [reference: [kitchen: -60, study: -75]])
        var drift = ReferenceDrift()
        drift.setBaseline(baseline, store: 1)
        return drift
    }

    @Test("a node that hears the reference 10 dB louder is named after a minute of samples, with its move; the other node is not")
    func namesTheNodeThatMoved() {
        var drift = Self.checked()
        for second in 0..<5 { drift.record(Self.sample(at: 600 + second * 10, [Self.kitchen: -50, Self.study: -76])) }
        #expect(drift.drift(store: 1).isEmpty, "five samples are not yet a minute")
        drift.record(Self.sample(at: 650, [Self.kitchen: -50, Self.study: -76]))
        #expect(drift.drift(store: 1) == [SurveyStatus.Drift(node: "a", department: 10, db: 10)])
        #expect(drift.drift(store: 2).isEmpty)
    }

    @Test("moves under 6 dB are no drift; a cleared fit checks nothing; a node back where it was is dropped")
    func smallMovesAndClearing() {
        var drift = Self.checked()
        for second in 0..<10 { drift.record(Self.sample(at: 600 + second * 10, [Self.kitchen: -55, Self.study: -70.5])) }
        #expect(drift.drift(store: 1).isEmpty)
        for second in 0..<40 { drift.record(Self.sample(at: 700 + second * 10, [Self.kitchen: -60, Self.study: -66])) }
        // The recent level follows over about five minutes (a mean of the latest 30 samples at most).
        let moved = drift.drift(store: 1)
        #expect(moved.map(\.node) == ["b"] && moved.first?.department == 20)
        #expect((8...9).contains(moved.first?.db ?? 0), "\(moved)")
        for second in 0..<40 { drift.record(Self.sample(at: 1200 + second * 10, [Self.kitchen: -60, Self.study: -75])) }
        #expect(drift.drift(store: 1).isEmpty, "five minutes back where it was")
        for second in 0..<10 { drift.record(Self.sample(at: 1700 + second * 10, [Self.kitchen: -40])) }
        drift.setBaseline(nil, store: 1)
        #expect(drift.drift(store: 1).isEmpty)
    }
}
