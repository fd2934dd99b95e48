import BeaconMeshAccuracy
import BeaconMeshCore
import Testing

@Suite struct GroundTruthTests {
    let beacon = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:100:1")!

    @Test func adjacentSpansInOneDepartmentMergeAndChangesAreCountedAcrossGaps() {
        let truth = GroundTruth([
            .init(beacon: beacon, from: 0, to: 1000, department: 1), .init(beacon: beacon, from: 1000, to: 2000, department: 1),
            .init(beacon: beacon, from: 2000, to: 3000, department: 2), .init(beacon: beacon, from: 4000, to: 5000, department: 1),
        ])
        #expect(truth.spans[beacon]?.count == 3)
        // Issue 51: a change across an unscored gap is a change too (the walks' truths leave the crossings out).
        #expect(truth.changes(of: beacon).map(\.to) == [2, 1])
        #expect(truth.changes(of: beacon).map(\.at) == [2000, 4000])
        #expect(truth.department(of: beacon, at: 1999) == 1)
        #expect(truth.department(of: beacon, at: 2000) == 2)
        #expect(truth.department(of: beacon, at: 3500) == nil)
    }
}
