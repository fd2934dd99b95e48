import BeaconMeshCore
import BeaconMeshWire
import Testing

@testable import BeaconMeshDashboard

@Suite("Store page data")
struct StorePageDataTests {
    typealias F = BoardFixtures

    private func board(_ members: [(MemberProfile, UInt16?, Int64)], at seconds: Int64, previous: StoreBoard? = nil) -> StoreBoard {
        var board = previous ?? StoreBoard(store: 1, broker: "b")
        let payload = F.snapshot(members: members, at: seconds)
        board.apply(snapshot: try! WireCodec.decodePresenceSnapshot(payload), payload: payload, at: F.at(seconds: seconds))
        return board
    }

    private func members(_ json: JSONValue) -> [JSONValue] {
        guard case .array(let items)? = json["members"] else { return [] }
        return items
    }

    @Test("a photo goes once per page connection; a member without one gets initials; a photo that is not an image is never sent")
    func photosOncePerConnection() {
        let store = board(
            [
                (F.member("ana", "Ana Souza", photo: F.photo), 10, 0), (F.member("zoe", "Zoë Martin"), 20, 0),
                (F.member("bad", "Bad Photo", photo: "javascript:alert(1)"), 20, 0),
            ], at: 1)
        var sent: [String: Int] = [:]
        let first = members(StorePageData.json(store, coordinator: nil, at: F.at(seconds: 1), photosSent: &sent))
        let ana = first.first { $0["id"] == .string("ana") }
        #expect(ana?["photo"] == .string(F.photo))
        #expect(ana?["hasPhoto"] == .bool(true))
        let zoe = first.first { $0["id"] == .string("zoe") }
        #expect(zoe?["photo"] == nil)
        #expect(zoe?["initials"] == .string("ZM"))
        let bad = first.first { $0["id"] == .string("bad") }
        #expect(bad?["photo"] == nil && bad?["hasPhoto"] == .bool(false))
        let second = members(StorePageData.json(store, coordinator: nil, at: F.at(seconds: 2), photosSent: &sent))
        #expect(second.first { $0["id"] == .string("ana") }?["photo"] == nil, "the same connection got the photo twice")
        var newConnection: [String: Int] = [:]
        let third = members(StorePageData.json(store, coordinator: nil, at: F.at(seconds: 2), photosSent: &newConnection))
        #expect(third.first { $0["id"] == .string("ana") }?["photo"] == .string(F.photo))
    }

    @Test("each member carries the coordinator's confidence; a member whose department is unknown has department and name null")
    func confidenceAndUnknownDepartment() {
        var store = StoreBoard(store: 1, broker: "b")
        let payload = F.snapshot(
            members: [(F.member("ana", "Ana Souza"), 10, 0), (F.member("zoe", "Zoë Martin"), nil, 1)], confidence: 0.25, at: 2)
        store.apply(snapshot: try! WireCodec.decodePresenceSnapshot(payload), payload: payload, at: F.at(seconds: 2))
        var sent: [String: Int] = [:]
        let json = members(StorePageData.json(store, coordinator: nil, at: F.at(seconds: 2), photosSent: &sent))
        let ana = json.first { $0["id"] == .string("ana") }
        #expect(ana?["department"] == .int(10) && ana?["departmentName"] == .string("Clothing"))
        #expect(ana?["confidence"] == .double(0.25))
        let zoe = json.first { $0["id"] == .string("zoe") }
        #expect(zoe?["department"] == .null && zoe?["departmentName"] == .null)
        #expect(zoe?["confidence"] == .double(0.25))
    }

    @Test("an arrival or a move in the event feed says why, with the confidence; other events and older ones do not")
    func eventsSayWhy() throws {
        var store = StoreBoard(store: 1, broker: "b")
        let zoe = F.member("zoe", "Zoë Martin")
        let reason = "node a hears -61.0 dBm, 8.5 dB above department 20 (node b), for 3.0 s"
        let events: [StoreEvent.Kind] = [
            .arrived(
                member: zoe, department: 10, departmentName: "Clothing", visit: VisitNumber(number: 1, previousAt: nil),
                greeting: "", evidence: DecisionEvidence(confidence: 0.92, reason: reason)),
            .moved(member: zoe, from: 10, to: 20, fromName: "Clothing", toName: "Housewares", evidence: nil),
            .left(member: zoe, department: 20, dwellSeconds: 3),
        ]
        for (index, kind) in events.enumerated() {
            store.apply(
                event: try WireCodec.decodeEvent(F.event("e-\(index)", kind, at: Int64(index + 1))), at: F.at(seconds: Int64(index + 1)))
        }
        var sent: [String: Int] = [:]
        guard case .array(let feed)? = StorePageData.json(store, coordinator: nil, at: F.at(seconds: 4), photosSent: &sent)["events"] else {
            Issue.record("no events")
            return
        }
        let why = Dictionary(
            uniqueKeysWithValues: feed.compactMap { event -> (String, JSONValue)? in
                guard case .string(let type)? = event["type"], let why = event["why"] else { return nil }
                return (type, why)
            })
        #expect(why["arrived"] == .string("92%: \(reason)"))
        #expect(why["moved"] == .null, "a coordinator that did not say")
        #expect(why["left"] == .null)
    }

    @Test("a member who appears in a new snapshot is highlighted for 1.5 s, newest arrival first")
    func arrivalHighlighted() {
        var store = board([(F.member("ana", "Ana Souza"), 10, 0)], at: 10)
        store = board([(F.member("ana", "Ana Souza"), 10, 0), (F.member("zoe", "Zoë Martin"), 20, 20)], at: 20, previous: store)
        var sent: [String: Int] = [:]
        let now = members(StorePageData.json(store, coordinator: nil, at: F.at(seconds: 20) + .milliseconds(1400), photosSent: &sent))
        #expect(now.map { $0["id"] } == [.string("zoe"), .string("ana")])
        #expect(now[0]["highlighted"] == .bool(true))
        #expect(now[1]["highlighted"] == .bool(false))
        let later = members(StorePageData.json(store, coordinator: nil, at: F.at(seconds: 20) + .milliseconds(1600), photosSent: &sent))
        #expect(later[0]["highlighted"] == .bool(false))
    }
}

@Suite("Store board events")
struct StoreBoardEventTests {
    typealias F = BoardFixtures

    @Test("an arrived event shows the member's row at once, a moved one moves it, a left one removes it; the next snapshot decides")
    func eventsShowAtOnce() throws {
        var store = StoreBoard(store: 1, broker: "b")
        let payload = F.snapshot(members: [(F.member("ana", "Ana Souza"), 10, 0)], at: 1)
        store.apply(snapshot: try WireCodec.decodePresenceSnapshot(payload), payload: payload, at: F.at(seconds: 1))
        let zoe = F.member("zoe", "Zoë Martin")
        store.apply(
            event: try WireCodec.decodeEvent(
                F.event(
                    "e-1",
                    .arrived(
                        member: zoe, department: 20, departmentName: "Housewares",
                        visit: VisitNumber(number: 4, previousAt: nil), greeting: "", evidence: nil), at: 2)),
            at: F.at(seconds: 2))
        #expect(store.model.membersByArrival.map(\.member.id) == ["zoe", "ana"])
        #expect(store.model.membersByArrival.first?.member.visits == 4)
        #expect(store.model.snapshot?.occupancy[20]?.members == 1)
        #expect(store.model.isHighlighted("zoe", at: F.at(seconds: 2)))

        store.apply(
            event: try WireCodec.decodeEvent(
                F.event(
                    "e-2", .moved(member: zoe, from: 20, to: 10, fromName: "Housewares", toName: "Clothing", evidence: nil), at: 3)),
            at: F.at(seconds: 3))
        #expect(store.model.snapshot?.members.first { $0.member.id == "zoe" }?.departmentName == "Clothing")
        #expect(store.model.snapshot?.occupancy[10]?.members == 2)
        #expect(store.model.snapshot?.occupancy[20]?.members == 0)

        store.apply(
            event: try WireCodec.decodeEvent(
                F.event("e-3", .left(member: F.member("ana", "Ana Souza"), department: 10, dwellSeconds: 3), at: 4)),
            at: F.at(seconds: 4))
        #expect(store.model.membersByArrival.map(\.member.id) == ["zoe"])

        // The coordinator's next snapshot is what counts (here it has nobody).
        let empty = F.snapshot(members: [], at: 5)
        store.apply(snapshot: try WireCodec.decodePresenceSnapshot(empty), payload: empty, at: F.at(seconds: 5))
        #expect(store.model.membersByArrival.isEmpty)
    }
}
