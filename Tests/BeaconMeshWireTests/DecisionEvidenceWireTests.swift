import BeaconMeshCore
import Testing

@testable import BeaconMeshWire

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// How sure and why: `confidence` and `reason` on `arrived` and `moved`, `confidence` and a null `department` in the
/// presence snapshot — and payloads of a coordinator older than these fields still read.
@Suite("Wire decision evidence")
struct DecisionEvidenceWireTests {
    static let ana = MemberProfile(id: "ana", name: "Ana", favoriteDrink: nil)
    static let reason = "node a hears -61.0 dBm, 8.5 dB above department 10 (node b), for 3.0 s"

    @Test("an arrival and a move carry confidence and reason, and read back the same")
    func eventsCarryEvidence() throws {
        let evidence = DecisionEvidence(confidence: 0.92, reason: Self.reason)
        let arrived = StoreEvent(
            id: "e1", store: 1, at: Timestamp(milliseconds: 5),
            kind: .arrived(
                member: Self.ana, department: 20, departmentName: "Housewares", visit: VisitNumber(number: 1, previousAt: nil),
                greeting: "Hi", evidence: evidence))
        let moved = StoreEvent(
            id: "e2", store: 1, at: Timestamp(milliseconds: 6),
            kind: .moved(member: Self.ana, from: 20, to: 10, fromName: "Housewares", toName: "Clothing", evidence: evidence))
        for event in [arrived, moved] {
            let encoded = WireCodec.encode(event)
            #expect(text(encoded).contains(#""confidence":0.92,"reason":"node a hears -61.0 dBm, 8.5 dB above department 10"#))
            let decoded = try WireCodec.decodeEvent(encoded)
            #expect(decoded == event)
            #expect(decoded.evidence == evidence)
        }
    }

    @Test("an arrival and a move from an older coordinator, without confidence and reason, read with no evidence")
    func olderEventsStillRead() throws {
        let member = #""member":{"id":"ana","name":"Ana","favoriteDrink":null,"visits":3,"lastVisitAt":null}"#
        let arrived =
            #"{"v":1,"id":"e1","type":"arrived","store":1,"at":5,"# + member
            + #","department":10,"departmentName":"Clothing","visit":{"number":3,"previousAt":null},"greeting":"Hi"}"#
        let moved =
            #"{"v":1,"id":"e2","type":"moved","store":1,"at":6,"# + member
            + #","from":10,"to":20,"fromName":"Clothing","toName":"Housewares"}"#
        let old = try [arrived, moved].map { try WireCodec.decodeEvent(Array($0.utf8)) }
        #expect(old.map(\.type) == ["arrived", "moved"])
        #expect(old.allSatisfy { $0.evidence == nil })
        guard case .moved(_, 10, 20, "Clothing", "Housewares", nil) = old[1].kind else {
            Issue.record("\(old[1].kind)")
            return
        }
    }

    @Test(
        "a confidence outside 0–1, or one without its reason, is refused by reason",
        arguments: [
            (#""confidence":1.5,"reason":"r""#, "absurd-value"), (#""confidence":-0.1,"reason":"r""#, "absurd-value"),
            (#""confidence":"high","reason":"r""#, "wrong-type"), (#""confidence":0.5"#, "wrong-type"),
            (#""reason":"r""#, "wrong-type"),
        ])
    func badEvidenceRefused(fields: String, reason: String) {
        let payload =
            #"{"v":1,"id":"e2","type":"moved","store":1,"at":6,"member":{"id":"ana","name":"Ana"},"#
            + #""from":10,"to":20,"fromName":"Clothing","toName":"Housewares","# + fields + "}"
        do {
            _ = try WireCodec.decodeEvent(Array(payload.utf8))
            Issue.record("accepted \(fields)")
        } catch {
            #expect(error.reason == reason, "\(error)")
        }
    }

    @Test("a member whose department is unknown is listed with department and departmentName null, with a confidence")
    func snapshotWithUnknownDepartment() throws {
        let snapshot = PresenceSnapshot(
            store: 1, name: "San Francisco", updatedAt: Timestamp(milliseconds: 9),
            members: [
                .init(
                    member: Self.ana, department: nil, departmentName: nil, proximity: .far, arrivedAt: Timestamp(milliseconds: 1),
                    inDepartmentSince: Timestamp(milliseconds: 2), lastSeen: Timestamp(milliseconds: 8), confidence: 0.35),
                .init(
                    member: MemberProfile(id: "zoe", name: "Zoë", favoriteDrink: nil), department: 20, departmentName: "Housewares",
                    proximity: .near, arrivedAt: Timestamp(milliseconds: 1), inDepartmentSince: Timestamp(milliseconds: 2),
                    lastSeen: Timestamp(milliseconds: 8), confidence: 1),
            ],
            occupancy: [20: .init(members: 1, guests: 0)], nodes: [])
        let encoded = WireCodec.encode(snapshot)
        #expect(text(encoded).contains(#""department":null,"departmentName":null,"proximity":"far""#))
        #expect(text(encoded).contains(#""lastSeen":8,"confidence":0.35}"#))
        #expect(text(encoded).contains(#""department":20,"departmentName":"Housewares""#))
        let decoded = try WireCodec.decodePresenceSnapshot(encoded)
        #expect(decoded == snapshot)
        #expect(decoded.members.map(\.department) == [nil, 20])
        #expect(decoded.members.map(\.confidence) == [0.35, 1])
    }

    @Test("a snapshot from an older coordinator, without confidence, reads with none")
    func olderSnapshotStillReads() throws {
        let old =
            #"{"v":1,"store":1,"name":"S","updatedAt":9,"members":[{"member":{"id":"ana","name":"Ana"},"department":10,"#
            + #""departmentName":"Clothing","proximity":"near","arrivedAt":1,"inDepartmentSince":2,"lastSeen":8}],"#
            + #""occupancy":{"10":{"members":1,"guests":0}},"nodes":[]}"#
        let snapshot = try WireCodec.decodePresenceSnapshot(Array(old.utf8))
        #expect(snapshot.members.first?.department == 10)
        #expect(snapshot.members.first?.confidence == nil)
    }
}
