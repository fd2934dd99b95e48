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
        try await run.send(department: 20, minor: 1, from: 9, count: 8)
        let resumed = await run.waitForEvent("resumed")
        #expect(resumed?["department"] as? Int == 20 && resumed?["departmentName"] as? String == "Housewares", "\(run.events.lines)")
        #expect((resumed?["visit"] as? [String: Any])?["number"] as? Int == 12, "\(String(describing: resumed))")
        #expect((resumed?["confidence"] as? Double).map { (0...1).contains($0) } == true && resumed?["reason"] is String)
        #expect(resumed?["greeting"] == nil, "a resumed visit greets nobody")
        let second = await eventually(timeout: .seconds(10)) { run.events(ofType: "left").count >= 2 ? true : nil }
        #expect(second == true, "\(run.events.lines)")
        #expect(run.events(ofType: "arrived").count == 1)
        let types = run.events.lines.compactMap(Mesh.payload(of:)).compactMap { $0["type"] as? String }
            .filter { ["arrived", "left", "resumed", "moved"].contains($0) }
        #expect(types == ["arrived", "left", "resumed", "left"], "\(types)")
        #expect(await run.registryCounts("ana", visits: 12), "one visit counted")
        await run.stop()
    }
}
