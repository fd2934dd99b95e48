import BeaconMeshCore
import Testing

@testable import BeaconMeshWire

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

@Suite("Survey JSON")
struct SurveyWireTests {
    @Test(
        "survey show's object is the contract's: departments ascending with their seconds by source, the fit's time and accuracy, or null")
    func show() throws {
        let fit = SurveyFit(
            store: 1, nodes: [], departments: [10, 20], weights: [], biases: [0, 0], means: [], inverseCovariance: [],
            fitnessLimit: 1, fittedAt: Timestamp(milliseconds: 1_763_769_600_000), accuracy: 0.97, samples: 420)
        let shown = WireCodec.encodeSurvey(store: 1, seconds: [20: [.walk: 180], 10: [.walk: 240, .reference: 60]], fit: fit)
        #expect(
            text(shown)
                == #"{"store":1,"samples":[{"department":10,"seconds":300,"sources":{"walk":240,"reference":60,"checkin":0}},{"department":20,"seconds":180,"sources":{"walk":180,"reference":0,"checkin":0}}],"fit":{"fittedAt":1763769600000,"accuracy":0.97}}"#
        )
        _ = try WireCodec.parse(shown)
        #expect(text(WireCodec.encodeSurvey(store: 7, seconds: [:], fit: nil)) == #"{"store":7,"samples":[],"fit":null}"#)
    }

    @Test("survey fit's object holds seconds, stretches and right per department, the confusion rows and what to walk again")
    func quality() throws {
        let quality = SurveyQuality(
            store: 2, departments: [10, 20], samples: [60, 45], stretches: [2, 1], confusion: [58, 2, 5, 40], accuracy: 0.5)
        let bytes = WireCodec.encode(quality, fittedAt: Timestamp(milliseconds: 9))
        #expect(
            text(bytes)
                == #"{"store":2,"fittedAt":9,"accuracy":0.5,"samples":[{"department":10,"seconds":60,"stretches":2,"right":"#
                + "\(58.0 / 60)"
                + #"},{"department":20,"seconds":45,"stretches":1,"right":"#
                + "\(40.0 / 45)"
                + #"}],"confusion":{"departments":[10,20],"rows":[[58,2],[5,40]]},"needsWalking":[{"department":20,"why":"only 45 s: walk it for a minute or more"}]}"#
        )
        guard case .object(let members) = try WireCodec.parse(bytes) else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.0) == ["store", "fittedAt", "accuracy", "samples", "confusion", "needsWalking"])
    }
}
