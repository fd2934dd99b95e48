import BeaconMeshCore
import Testing

@testable import BeaconMeshMonitor

@Suite("Monitor model")
struct MonitorModelTests {
    typealias F = StoreFixtures

    @Test("a member who appears in a new snapshot is highlighted for about 1.5 s, then no longer")
    func arrivalHighlightExpires() {
        var model = F.threeMembers()
        let arrival = F.at(seconds: 200)
        model.apply(snapshot: F.snapshot([F.present(F.zoe, arrivedAt: arrival)] + model.snapshot!.members, at: arrival), at: arrival)
        #expect(model.isHighlighted("zoe", at: F.at(seconds: 200.1)))
        #expect(model.isHighlighted("zoe", at: F.at(seconds: 201.4)))
        #expect(!model.isHighlighted("zoe", at: F.at(seconds: 201.6)))
        #expect(!model.isHighlighted("ana", at: F.at(seconds: 200.1)), "members already there are not highlighted")
    }

    @Test("starting the monitor highlights only members who arrived just now, not the whole store")
    func firstSnapshotHighlightsOnlyFreshArrivals() {
        var model = MonitorModel(store: 1, broker: "b")
        let now = F.at(seconds: 300)
        model.apply(
            snapshot: F.snapshot(
                [
                    F.present(F.ana, arrivedAt: F.at(seconds: 0)), F.present(F.zoe, arrivedAt: F.at(seconds: 299.5)),
                ], at: now), at: now)
        #expect(!model.isHighlighted("ana", at: now))
        #expect(model.isHighlighted("zoe", at: now))
        #expect(!model.showsPresenceChange(at: now), "the first snapshot is not a change")
    }

    @Test("an arrived event highlights its member and flashes Presence change for about a second")
    func arrivedEvent() {
        var model = F.threeMembers()
        model.apply(event: F.arrived(F.zoe, id: "e1", at: F.at(seconds: 140)), at: F.at(seconds: 140))
        #expect(model.isHighlighted("zoe", at: F.at(seconds: 141)))
        #expect(model.showsPresenceChange(at: F.at(seconds: 140.9)))
        #expect(!model.showsPresenceChange(at: F.at(seconds: 141.1)))
    }

    @Test("the periodic republish of an unchanged snapshot is not a presence change; a move is")
    func presenceChangeOnlyOnChange() {
        var model = F.threeMembers()
        var same = model.snapshot!
        same.updatedAt = F.at(seconds: 160)
        same.members[0].proximity = .far  // proximity wavers all the time: not a change of who is where
        model.apply(snapshot: same, at: F.at(seconds: 160))
        #expect(!model.showsPresenceChange(at: F.at(seconds: 160.1)))

        var moved = same
        moved.members[0].department = 20
        model.apply(snapshot: moved, at: F.at(seconds: 170))
        #expect(model.showsPresenceChange(at: F.at(seconds: 170.1)))
    }

    @Test("a member whose department becomes unknown is a presence change and counts in no department; a move takes them to one")
    func unknownDepartment() throws {
        var model = F.threeMembers()
        var unsure = model.snapshot!
        let ana = try #require(unsure.members.firstIndex { $0.member.id == "ana" })
        unsure.members[ana].department = nil
        unsure.members[ana].departmentName = nil
        unsure.members[ana].confidence = 0.4
        unsure.occupancy[10]?.members = 0
        model.apply(snapshot: unsure, at: F.at(seconds: 160))
        #expect(model.showsPresenceChange(at: F.at(seconds: 160.1)))
        #expect(model.departmentName(10) == "Clothing", "a member without a department names none")

        model.apply(
            event: F.event(
                "m1", at: F.at(seconds: 170),
                .moved(
                    member: F.ana, from: 10, to: 20, fromName: "Clothing", toName: "Housewares",
                    evidence: DecisionEvidence(confidence: 0.8, reason: "node a of Housewares"))),
            at: F.at(seconds: 170))
        let moved = try #require(model.snapshot?.members.first { $0.member.id == "ana" })
        #expect(moved.department == 20 && moved.departmentName == "Housewares" && moved.confidence == 0.8)
        #expect(model.snapshot?.occupancy[10]?.members == 0, "she was counted in no department: none loses her")
        #expect(model.snapshot?.occupancy[20]?.members == 2)
    }

    @Test("an arrived event lists its member at once with the event's confidence")
    func arrivalConfidence() {
        var model = F.threeMembers()
        model.apply(
            event: F.event(
                "a1", at: F.at(seconds: 140),
                .arrived(
                    member: F.zoe, department: 10, departmentName: "Clothing", visit: VisitNumber(number: 2, previousAt: nil),
                    greeting: "Hi", evidence: DecisionEvidence(confidence: 0.75, reason: "node a"))),
            at: F.at(seconds: 140))
        #expect(model.snapshot?.members.first { $0.member.id == "zoe" }?.confidence == 0.75)
    }

    @Test("the promos panel keeps the last five promos, newest first")
    func recentPromos() {
        var model = F.threeMembers()
        for index in 1...7 {
            model.apply(
                event: F.promo(F.ana, title: "Promo \(index)", id: "p\(index)", at: F.at(seconds: Double(index))),
                at: F.at(seconds: 200))
        }
        #expect(model.recentPromos.map(\.title) == ["Promo 7", "Promo 6", "Promo 5", "Promo 4", "Promo 3"])
        #expect(model.recentPromos.first?.memberName == "Ana Souza")
        #expect(model.recentPromos.first?.departmentName == "Clothing")
    }

    @Test("an event delivered twice (QoS 1) is applied once")
    func duplicateEvent() {
        var model = F.threeMembers()
        let promo = F.promo(F.ana, title: "Once", id: "same-id", at: F.at(seconds: 150))
        model.apply(event: promo, at: F.at(seconds: 150))
        model.apply(event: promo, at: F.at(seconds: 151))
        #expect(model.recentPromos.count == 1)
    }

    @Test("a lost broker keeps the view, marked stale since the first loss, until it reconnects")
    func staleWhileDisconnected() {
        var model = F.threeMembers()
        model.connection(changed: false, at: F.at(seconds: 200))
        model.connection(changed: false, at: F.at(seconds: 205))
        #expect(model.isStale)
        #expect(model.connection == .lost(since: F.at(seconds: 200)))
        #expect(model.lastUpdate == F.at(seconds: 130))
        #expect(model.membersByArrival.count == 3)
        model.connection(changed: true, at: F.at(seconds: 210))
        #expect(!model.isStale)
    }

    @Test("members are listed newest arrival first")
    func newestFirst() {
        #expect(F.threeMembers().membersByArrival.map(\.member.id) == ["li", "jose", "ana"])
    }

    @Test("a snapshot or event of another store is counted as unreadable and changes nothing")
    func otherStore() {
        var model = F.threeMembers()
        model.apply(snapshot: F.snapshot([], at: F.at(seconds: 200), store: 2), at: F.at(seconds: 200))
        model.apply(event: F.promo(F.ana, title: "x", id: "o1", at: F.at(seconds: 200)).withStore(2), at: F.at(seconds: 200))
        #expect(model.membersByArrival.count == 3)
        #expect(model.recentPromos.isEmpty)
        #expect(model.droppedMessages == 2)
    }

    @Test("a node event shows at once in the node list")
    func nodeEvent() {
        var model = F.threeMembers()
        model.apply(
            event: F.event("n1", at: F.at(seconds: 140), .node(department: 30, node: "a", state: .online)),
            at: F.at(seconds: 140))
        model.apply(
            event: F.event("n2", at: F.at(seconds: 141), .node(department: 20, node: "b", state: .offline)),
            at: F.at(seconds: 141))
        let nodes = model.snapshot!.nodes.map { "\($0.department)/\($0.node) \($0.state.rawValue)" }
        #expect(nodes == ["10/a online", "30/a online", "20/b offline"])
    }
}

extension StoreEvent {
    func withStore(_ store: UInt16) -> StoreEvent {
        var copy = self
        copy.store = store
        return copy
    }
}
