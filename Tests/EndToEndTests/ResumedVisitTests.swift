import BeaconMeshTesting
import Foundation
import Testing

/// A member who leaves and comes back within `visitGap` continues her visit: `resumed`, no second greeting, and the
/// one `left` that ends it closes the `resumed` (once, the second `left` closed nothing).
@Suite("a visit resumed within visitGap, end to end", .serialized)
struct ResumedVisitTests {
    @Test("Ana leaves and comes back within visitGap: arrived, left, resumed (in Housewares, no greeting), left; counted once")
    func leaveAndComeBack() async throws {
        let run = try await CoordinatorRun.start()
        try await run.send(department: 10, minor: 1, from: 1, count: 8)
        #expect(await run.waitForEvent("arrived") != nil, "\(run.coordinator.transcript)")
        #expect(await run.waitForEvent("left") != nil, "\(run.coordinator.transcript)")
        let leftBefore = run.events(ofType: "left").count
        try await run.send(department: 20, minor: 1, from: 9, count: 8)
        // Her return to Housewares resumes the visit (on a loaded machine a late batch may have resumed and ended it
        // once already in Clothing: each resumption still closes with its own left).
        let resumedInHousewares = await eventually(timeout: .seconds(10)) {
            run.events(ofType: "resumed").last { $0["department"] as? Int == 20 }
        }
        let resumed = resumedInHousewares
        #expect(resumed?["departmentName"] as? String == "Housewares", "\(run.events.lines)")
        #expect((resumed?["visit"] as? [String: Any])?["number"] as? Int == 12, "\(String(describing: resumed))")
        #expect((resumed?["confidence"] as? Double).map { (0...1).contains($0) } == true && resumed?["reason"] is String)
        #expect(resumed?["greeting"] == nil, "a resumed visit greets nobody")
        // And the resumed visit ends with a left of its own.
        let closed = await eventually(timeout: .seconds(10)) { () -> Bool? in
            let visitEvents = run.events.lines.compactMap(Mesh.payload(of:)).filter {
                ["arrived", "left", "resumed", "moved"].contains($0["type"] as? String ?? "")
            }
            guard let back = visitEvents.lastIndex(where: { $0["type"] as? String == "resumed" && $0["department"] as? Int == 20 })
            else { return nil }
            return visitEvents[back...].contains { $0["type"] as? String == "left" } ? true : nil
        }
        #expect(closed == true && run.events(ofType: "left").count > leftBefore, "\(run.events.lines)")
        #expect(run.events(ofType: "arrived").count == 1)
        let types = run.events.lines.compactMap(Mesh.payload(of:)).compactMap { $0["type"] as? String }
            .filter { ["arrived", "left", "resumed", "moved"].contains($0) }
        #expect(types.first == "arrived" && types.last == "left" && types.filter { $0 == "left" }.count >= 2, "\(types)")
        #expect(EventGrammar.violations(inLines: run.events.lines).isEmpty, "\(types)")
        #expect(await run.registryCounts("ana", visits: 12), "one visit counted")
        await run.stop()
    }
}
