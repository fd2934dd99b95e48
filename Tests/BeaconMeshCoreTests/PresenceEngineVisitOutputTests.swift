import Testing

@testable import BeaconMeshCore

/// The engine's outputs carry the visit as it stands after every change, so its caller never asks the engine back.
@Suite("Presence engine: visit outputs")
struct PresenceEngineVisitOutputTests {
    /// The visit carried after each visit-changing output (before the next change).
    private static func visitsAfterChanges(_ outputs: [PresenceEngine.Output]) -> [(
        change: PresenceEngine.Output, visit: PresenceEngine.Visit?
    )] {
        outputs.enumerated().compactMap { index, output in
            guard output.changesVisit else { return nil }
            for later in outputs[(index + 1)...] {
                if case .visitChanged(let visit) = later { return (output, visit) }
                if later.changesVisit { break }
            }
            return (output, nil)
        }
    }

    @Test("arrived, moved and left are each followed by the member's visit as it then stands")
    func visitFollowsEachChange() throws {
        var script = StoreScript()
        script.hold(.seconds(3), [10: -55])
        script.hold(.seconds(6), [10: -85, 20: -50])
        script.hold(.seconds(15))
        let changes = Self.visitsAfterChanges(script.outputs)
        #expect(changes.count == 3, "\(script.outputs)")
        for (change, visit) in changes {
            let visit = try #require(visit, "no visit after \(change)")
            #expect(visit.member == "ana")
            switch change {
            case .arrived(_, _, let department, let at, _):
                #expect(visit.department == department && visit.arrivedAt == at && visit.leftAt == nil)
            case .moved(_, _, _, let to, let at, _):
                #expect(visit.department == to && visit.inDepartmentSince == at && visit.leftAt == nil)
            case .left(_, _, let department, _, _):
                #expect(visit.department == department && visit.leftAt != nil)
            default:
                Issue.record("unexpected \(change)")
            }
        }
        // The engine's own record agrees with the last visit it handed out.
        #expect(changes.last?.visit == script.engine.visit(of: "ana"))
    }
}
