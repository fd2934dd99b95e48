import BeaconMeshCore
import BeaconMeshRegistry
import Testing

@testable import BeaconMeshCoordinator

/// `survey mark --beacon member:ID` in the decisions: a member's mark marks the beacons the registry gives her, and a
/// mark for a member it does not know is dropped and counted.
@Suite("Coordinator decisions: a member's survey marks")
struct MemberSurveyMarkTests {
    @Test("a mark for member ana samples her fob in the marked department; her stop ends it; an unknown member is dropped and counted")
    func memberMarks() {
        var state = AlertDecisionTests.state(alerts: [])
        let start = CoordinatorDecisionTests.start
        state.handle(.surveyMark(SurveyMark(.member("ana"), department: 10, at: start), store: 1), at: start)
        var seq: UInt64 = 0
        let walked = CoordinatorDecisionTests.walk(&state, in: CoordinatorDecisionTests.clothing, from: start, seconds: 4, seq: &seq)
        let samples = walked.flatMap(\.registry.surveySamples)
        #expect(samples.count >= 3, "about one a second")
        #expect(samples.allSatisfy { $0.beacon == CoordinatorDecisionTests.anaFob && $0.department == 10 && $0.store == 1 })

        let later = start + .seconds(4)
        state.handle(.surveyMark(.stop(.member("ana"), at: later), store: 1), at: later)
        let stopped = CoordinatorDecisionTests.walk(&state, in: CoordinatorDecisionTests.clothing, from: later, seconds: 3, seq: &seq)
        #expect(stopped.flatMap(\.registry.surveySamples).isEmpty)

        state.handle(.surveyMark(SurveyMark(.member("zoe"), department: 10, at: later), store: 1), at: later)
        #expect(state.drops.counts["unknown-member"] == 1)
    }
}
