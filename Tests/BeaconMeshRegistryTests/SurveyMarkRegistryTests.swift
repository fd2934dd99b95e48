import BeaconMeshCore
import Testing

@testable import BeaconMeshRegistry

/// The survey marks a store's holder keeps, so that a restart or a take-over goes on sampling: kept, replaced and
/// ended through the writer's changes, read per store, and gone with the member whose beacon was marked.
@Suite("Survey marks in the registry")
struct SurveyMarkRegistryTests {
    @Test(
        "marks are kept, replaced and ended by apply, read for the stores asked, and forgotten with their member",
        arguments: Backend.allCases)
    func marks(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        let ana = SurveySamples.beacon(1)
        try registry.merge(
            try MembersCSV.parse(
                "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\nana,Ana,,\(ana.description),,0,,", file: "m.csv"))
        let surveyor = SurveySamples.beacon(2)
        let at = Timestamp(milliseconds: 1_800_000_000_000)
        var changes = RegistryChanges()
        changes.keep(SurveyMarkRecord(store: 1, beacon: surveyor, department: 10, since: at))
        changes.keep(SurveyMarkRecord(store: 1, beacon: ana, department: nil, since: at))
        changes.keep(SurveyMarkRecord(store: 2, beacon: surveyor, department: 30, since: at))
        #expect(changes.count == 3 && !changes.isEmpty)
        try registry.apply(changes)
        #expect(
            try Set(registry.surveyMarks(stores: [1])) == [
                SurveyMarkRecord(store: 1, beacon: surveyor, department: 10, since: at),
                SurveyMarkRecord(store: 1, beacon: ana, department: nil, since: at),
            ])
        var later = RegistryChanges()
        later.keep(SurveyMarkRecord(store: 1, beacon: surveyor, department: 20, since: at + .seconds(15)))
        later.endMark(SurveyMarkRecord.Key(store: 2, beacon: surveyor))
        var merged = RegistryChanges()
        merged.merge(later)
        try registry.apply(merged)
        #expect(try registry.surveyMarks(stores: [2]).isEmpty)
        #expect(try registry.surveyMarks(stores: nil).map(\.department).sorted { ($0 ?? 0) < ($1 ?? 0) } == [nil, 20])
        #expect(try registry.forget(id: "ana"))
        #expect(
            try registry.surveyMarks(stores: nil) == [
                SurveyMarkRecord(store: 1, beacon: surveyor, department: 20, since: at + .seconds(15))
            ])
    }
}
