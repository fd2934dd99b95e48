import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
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

    @Test("the store's holder keeps each accepted mark for the registry, and a state started with kept marks samples on")
    func keptMarks() {
        var state = AlertDecisionTests.state(alerts: [])
        let start = CoordinatorDecisionTests.start
        let fob = CoordinatorDecisionTests.anaFob
        let key = SurveyMarkRecord.Key(store: 1, beacon: fob)
        let marked = state.handle([.surveyMark(SurveyMark(.member("ana"), department: 10, at: start), store: 1)], at: start)
        #expect(marked.registry.surveyMarks == [key: SurveyMarkRecord(store: 1, beacon: fob, department: 10, since: start)])
        let stopped = state.handle([.surveyMark(.stop(.member("ana"), at: start), store: 1)], at: start + .seconds(1))
        #expect(stopped.registry.surveyMarks.count == 1 && stopped.registry.surveyMarks[key] == .some(.none), "the mark ended")
        let refused = state.handle([.surveyMark(SurveyMark(.member("ana"), department: 99, at: start), store: 1)], at: start)
        #expect(refused.registry.surveyMarks.isEmpty, "a refused mark is not kept")

        // A restart: the registry's marks are held again, and her fob is sampled without a new mark.
        var restarted = AlertDecisionTests.state(
            alerts: [], surveyMarks: [SurveyMarkRecord(store: 1, beacon: fob, department: 10, since: start)])
        var seq: UInt64 = 0
        let walked = CoordinatorDecisionTests.walk(&restarted, in: CoordinatorDecisionTests.clothing, from: start, seconds: 4, seq: &seq)
        let samples = walked.flatMap(\.registry.surveySamples)
        #expect(samples.count >= 3 && samples.allSatisfy { $0.beacon == fob && $0.department == 10 })
    }
}
