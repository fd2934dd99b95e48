import BeaconMeshCore
import BeaconMeshWire
import Testing

@testable import BeaconMeshDashboard

@Suite("Chain board")
struct ChainBoardTests {
    typealias F = BoardFixtures

    @Test("a snapshot makes its store appear with members and guests, and keeps its bytes for the API")
    func snapshotShowsStore() {
        var board = ChainBoard(broker: "mqtt://b:1883")
        let payload = F.snapshot(members: [(F.member("ana", "Ana Souza"), 10, 0)], guests: 3, at: 5)
        let (change, dropped) = board.receive(topic: F.topics.presence(store: 1), payload: payload, at: F.at(seconds: 5))
        #expect(change == .store(1))
        #expect(dropped == nil)
        let store = try! #require(board.stores[1])
        #expect(store.name == "San Francisco")
        #expect(store.headcount.members == 1)
        #expect(store.headcount.guests == 3)
        #expect(store.snapshotPayload == payload)
    }

    @Test("a snapshot whose body names another store than its topic is dropped and counted")
    func mismatchedSnapshotIsDropped() {
        var board = ChainBoard(broker: "b")
        let (change, dropped) = board.receive(
            topic: F.topics.presence(store: 2), payload: F.snapshot(store: 1, members: [], at: 1),
            at: F.at(seconds: 1))
        #expect(change == .none)
        #expect(dropped?.reason == "absurd-value")
        #expect(board.messagesDropped == 1)
        #expect(board.stores.isEmpty)
    }

    @Test("garbage is dropped with its reason and changes nothing")
    func garbageIsDropped() {
        var board = ChainBoard(broker: "b")
        let (change, dropped) = board.receive(topic: F.topics.events(store: 1), payload: Array("{nope".utf8), at: F.at(seconds: 1))
        #expect(change == .none)
        #expect(dropped?.reason == "invalid-json")
        #expect(board.stores.isEmpty)
    }

    @Test("an event delivered twice (same id) is listed once, newest first")
    func redeliveredEventListedOnce() {
        var board = ChainBoard(broker: "b")
        let ana = F.member("ana", "Ana Souza")
        let arrived = F.event(
            "e-1",
            .arrived(
                member: ana, department: 10, departmentName: "Clothing",
                visit: VisitNumber(number: 2, previousAt: nil), greeting: "Hi", evidence: nil), at: 1)
        let left = F.event("e-2", .left(member: ana, department: 10, dwellSeconds: 125), at: 9)
        _ = board.receive(topic: F.topics.events(store: 1), payload: arrived, at: F.at(seconds: 1))
        _ = board.receive(topic: F.topics.events(store: 1), payload: arrived, at: F.at(seconds: 2))
        _ = board.receive(topic: F.topics.events(store: 1), payload: left, at: F.at(seconds: 9))
        let events = board.stores[1]!.recentEvents
        #expect(events.map(\.id) == ["e-2", "e-1"])
        #expect(EventText.describe(events[0], departmentName: { "Dept \($0)" }) == "Ana Souza left after 2m 05s")
    }

    @Test("a node's own offline status wins over an older snapshot, and the overview says the store needs attention")
    func offlineNodeNeedsAttention() throws {
        var board = ChainBoard(broker: "b")
        let coordinator = WireCodec.encode(CoordinatorStatus(state: .online, stores: [1], startedAt: F.at(seconds: 0)))
        _ = board.receive(topic: F.topics.coordinatorStatus(id: "hq"), payload: coordinator, at: F.at(seconds: 0))
        _ = board.receive(
            topic: F.topics.presence(store: 1),
            payload: F.snapshot(members: [], nodes: [.init(department: 10, node: "a", state: .online)], at: 1),
            at: F.at(seconds: 1))
        var overview = ChainPageData.json(board, at: F.at(seconds: 2))
        #expect(overview["stores"].flatMap(first)?["attention"] == .bool(false))
        let node = NodeAddress(store: 1, department: 10, node: "a")!
        let offline = WireCodec.encode(NodeStatus(state: .offline, version: "1", boot: "b", source: "hci0", startedAt: F.at(seconds: 0)))
        #expect(board.receive(topic: F.topics.nodeStatus(node), payload: offline, at: F.at(seconds: 3)).change == .store(1))
        overview = ChainPageData.json(board, at: F.at(seconds: 4))
        let store = try #require(overview["stores"].flatMap(first))
        #expect(store["nodesOffline"] == .int(1))
        #expect(store["attention"] == .bool(true))
        #expect(store["coordinator"]?["id"] == .string("hq"))
        #expect(overview["totals"]?["needAttention"] == .int(1))
    }

    @Test("a store heard of last 75 s ago is quiet; one no coordinator lists has none")
    func quietStore() {
        var board = ChainBoard(broker: "b")
        _ = board.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(members: [], at: 0), at: F.at(seconds: 0))
        #expect(board.stores[1]!.isQuiet(at: F.at(seconds: 74)) == false)
        #expect(board.stores[1]!.isQuiet(at: F.at(seconds: 75)) == true)
        #expect(board.coordinator(of: 1) == nil)
        #expect(ChainPageData.json(board, at: F.at(seconds: 10))["stores"].flatMap(first)?["attention"] == .bool(true))
    }

    @Test("with two coordinators listing a store, the overview names the one that holds it and flags a store nobody holds")
    func leaseHolders() throws {
        var board = ChainBoard(broker: "b")
        _ = board.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(members: [], at: 0), at: F.at(seconds: 0))
        let standing = WireCodec.encode(CoordinatorStatus(state: .online, stores: [1], active: [], startedAt: F.at(seconds: 0)))
        let holding = WireCodec.encode(CoordinatorStatus(state: .online, stores: [1], active: [1], startedAt: F.at(seconds: 0)))
        _ = board.receive(topic: F.topics.coordinatorStatus(id: "a-first"), payload: standing, at: F.at(seconds: 0))
        _ = board.receive(topic: F.topics.coordinatorStatus(id: "b-second"), payload: holding, at: F.at(seconds: 0))
        var store = try #require(ChainPageData.json(board, at: F.at(seconds: 1))["stores"].flatMap(first))
        #expect(store["coordinator"]?["id"] == .string("b-second"), "the holder, not the first by id")
        #expect(store["held"] == .bool(true) && store["attention"] == .bool(false))
        #expect(store["standby"] == .array([.string("a-first")]))
        // The holder lost the lease (its database went away) and nobody took the store over yet.
        _ = board.receive(topic: F.topics.coordinatorStatus(id: "b-second"), payload: standing, at: F.at(seconds: 2))
        store = try #require(ChainPageData.json(board, at: F.at(seconds: 3))["stores"].flatMap(first))
        #expect(store["held"] == .bool(false) && store["attention"] == .bool(true))
        #expect(board.holder(of: 1) == nil)
    }

    @Test("with --store, other stores' messages change nothing and are not shown")
    func storeFilter() {
        var board = ChainBoard(broker: "b", stores: [2])
        #expect(
            board.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(members: [], at: 0), at: F.at(seconds: 0)).change == .none
        )
        #expect(board.stores.keys.sorted() == [2])
        #expect(board.shows(2) && !board.shows(1))
    }

    @Test("losing the broker marks every store's data stale; getting it back clears it")
    func brokerLinkStaleness() {
        var board = ChainBoard(broker: "b")
        board.connection(changed: true, at: F.at(seconds: 0))
        _ = board.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(members: [], at: 0), at: F.at(seconds: 0))
        board.connection(changed: false, at: F.at(seconds: 5))
        #expect(board.stores[1]!.model.isStale)
        #expect(board.board(of: 7).model.isStale, "a store not heard yet shares the broker link's state")
        board.connection(changed: true, at: F.at(seconds: 6))
        #expect(!board.stores[1]!.model.isStale)
    }

    private func first(_ value: JSONValue) -> JSONValue? {
        guard case .array(let items) = value else { return nil }
        return items.first
    }
}

@Suite("Chain board alerts")
struct ChainBoardAlertTests {
    typealias F = BoardFixtures

    static func alert(_ id: String, store: UInt16 = 1, at seconds: Int64, text: String) -> [UInt8] {
        var alert = Alert(
            rule: "vip-arrived", kind: .memberArrived, store: store, at: F.at(seconds: seconds), department: 10,
            departmentName: "Womenswear", member: F.member("ana", "Ana Souza"), text: text)
        alert.id = id
        return WireCodec.encode(alert)
    }

    @Test("a store's alerts are kept newest first, once each, at most ten; the page data lists them with rule, time and text")
    func alertsListed() {
        var board = ChainBoard(broker: "b")
        for number in 1...12 {
            let payload = Self.alert("a-\(number)", at: Int64(number), text: "Ana Souza (tier vip) arrived in Womenswear \(number)")
            #expect(board.receive(topic: F.topics.alerts(store: 1), payload: payload, at: F.at(seconds: Int64(number))).change == .store(1))
        }
        _ = board.receive(topic: F.topics.alerts(store: 1), payload: Self.alert("a-12", at: 12, text: "again"), at: F.at(seconds: 13))
        let store = try! #require(board.stores[1])
        #expect(store.recentAlerts.map(\.id) == (3...12).reversed().map { "a-\($0)" })
        #expect(store.model.latestAlert?.id == "a-12")
        var sent: [String: Int] = [:]
        guard case .array(let alerts)? = StorePageData.json(store, coordinator: nil, at: F.at(seconds: 13), photosSent: &sent)["alerts"]
        else {
            Issue.record("no alerts in the page data")
            return
        }
        #expect(alerts.count == 10)
        #expect(alerts.first?["rule"] == .string("vip-arrived") && alerts.first?["kind"] == .string("member-arrived"))
        #expect(alerts.first?["text"] == .string("Ana Souza (tier vip) arrived in Womenswear 12"))
        #expect(alerts.first?["at"] == .int(F.at(seconds: 12).milliseconds) && alerts.first?["member"] == .string("Ana Souza"))
    }

    @Test("an alert whose body names another store than its topic, or that is not an alert, is dropped and changes nothing")
    func badAlertsDropped() {
        var board = ChainBoard(broker: "b")
        let other = board.receive(
            topic: F.topics.alerts(store: 2), payload: Self.alert("a-1", store: 1, at: 1, text: "x"), at: F.at(seconds: 1))
        #expect(other.change == .none && other.dropReason?.reason == "absurd-value")
        let garbage = board.receive(
            topic: F.topics.alerts(store: 1), payload: Array(#"{"v":1,"kind":"meteor"}"#.utf8), at: F.at(seconds: 1))
        #expect(garbage.change == .none && garbage.dropReason != nil)
        #expect(board.stores.isEmpty && board.messagesDropped == 2)
    }

    @Test("the dashboard subscribes to its stores' alerts")
    func subscribesToAlerts() {
        #expect(DashboardFeed.filters(stores: [], topics: F.topics).contains("beaconmesh/v1/stores/+/alerts"))
        #expect(DashboardFeed.filters(stores: [3], topics: F.topics).contains("beaconmesh/v1/stores/3/alerts"))
    }
}
