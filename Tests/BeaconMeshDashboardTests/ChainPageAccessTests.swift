import BeaconMeshCore
import BeaconMeshWire
import Foundation
import Testing

@testable import BeaconMeshDashboard

@Suite("Overview data for a user with some stores")
struct ChainPageAccessTests {
    typealias F = BoardFixtures

    /// Two stores with a member each, one coordinator for both and one for store 2 only.
    static func board() -> ChainBoard {
        var board = ChainBoard(broker: "mqtt://b:1883")
        _ = board.receive(
            topic: F.topics.presence(store: 1), payload: F.snapshot(store: 1, members: [(F.member("ana", "Ana Souza"), 10, 0)], at: 5),
            at: F.at(seconds: 5))
        _ = board.receive(
            topic: F.topics.presence(store: 2), payload: F.snapshot(store: 2, members: [(F.member("zoe", "Zoë Martin"), 20, 0)], at: 5),
            at: F.at(seconds: 5))
        let both = WireCodec.encode(CoordinatorStatus(state: .online, stores: [1, 2], startedAt: F.at(seconds: 0)))
        _ = board.receive(topic: F.topics.coordinatorStatus(id: "hq"), payload: both, at: F.at(seconds: 0))
        let second = WireCodec.encode(CoordinatorStatus(state: .online, stores: [2], startedAt: F.at(seconds: 0)))
        _ = board.receive(topic: F.topics.coordinatorStatus(id: "store2-office"), payload: second, at: F.at(seconds: 0))
        return board
    }

    static func json(_ stores: StoreAccess) throws -> [String: Any] {
        let bytes = WireCodec.serialize(ChainPageData.json(board(), at: F.at(seconds: 6), stores: stores))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("a user of store 1 gets store 1 only: its card, totals of it alone, coordinators only as far as they serve it")
    func oneStore() throws {
        let data = try Self.json(.stores([1]))
        let stores = try #require(data["stores"] as? [[String: Any]])
        #expect(stores.map { $0["store"] as? Int } == [1])
        let totals = try #require(data["totals"] as? [String: Any])
        #expect(totals["stores"] as? Int == 1 && totals["members"] as? Int == 1)
        let coordinators = try #require(data["coordinators"] as? [[String: Any]])
        #expect(coordinators.map { $0["id"] as? String } == ["hq"])
        #expect(coordinators.first?["stores"] as? [Int] == [1])
        let text = String(
            decoding: WireCodec.serialize(ChainPageData.json(Self.board(), at: F.at(seconds: 6), stores: .stores([1]))), as: UTF8.self)
        #expect(!text.contains("Zoë") && !text.contains("store2-office"), "\(text)")
    }

    @Test("head office (all) gets every store and every coordinator as before")
    func headOffice() throws {
        let data = try Self.json(.all)
        #expect((data["stores"] as? [[String: Any]])?.map { $0["store"] as? Int } == [1, 2])
        #expect((data["coordinators"] as? [[String: Any]])?.map { $0["id"] as? String } == ["hq", "store2-office"])
        #expect((data["coordinators"] as? [[String: Any]])?.first?["stores"] as? [Int] == [1, 2])
    }
}
