import BeaconMeshCore
import Testing

@testable import BeaconMeshDashboard

@Suite("Dashboard hub")
struct DashboardHubTests {
    typealias F = BoardFixtures

    @Test("a store page wakes once at once, then for its store's changes only; the overview for every change; closing ends both")
    func wakesOnlyWhomItConcerns() async {
        let hub = DashboardHub(board: ChainBoard(broker: "b"))
        var store1 = hub.changes(of: .store(1)).makeAsyncIterator()
        var chain = hub.changes(of: .chain).makeAsyncIterator()
        #expect(hub.connectedPages == 2)
        #expect(await store1.next() != nil, "no first wake-up")
        #expect(await chain.next() != nil)

        hub.receive(topic: F.topics.presence(store: 2), payload: F.snapshot(store: 2, members: [], at: 1), at: F.at(seconds: 1))
        #expect(await chain.next() != nil, "the overview was not woken by store 2")
        hub.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(store: 1, members: [], at: 2), at: F.at(seconds: 2))
        // Store 1's page has exactly one wake-up waiting (store 2's change did not add one; wake-ups do not pile up).
        #expect(await store1.next() != nil)
        hub.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(store: 1, members: [], at: 3), at: F.at(seconds: 3))
        hub.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(store: 1, members: [], at: 4), at: F.at(seconds: 4))
        hub.close()
        #expect(await store1.next() != nil, "the last wake-up before closing")
        #expect(await store1.next() == nil, "wake-ups piled up, or closing did not end the stream")
        #expect(await chain.next() != nil)
        #expect(await chain.next() == nil)
        #expect(hub.connectedPages == 0)
        var late = hub.changes(of: .chain).makeAsyncIterator()
        #expect(await late.next() == nil, "a page after closing should end at once")
    }

    @Test("a store page is not woken by another store's change")
    func notWokenByOtherStores() async throws {
        let hub = DashboardHub(board: ChainBoard(broker: "b"))
        let stream = hub.changes(of: .store(1))
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()
        hub.receive(topic: F.topics.presence(store: 2), payload: F.snapshot(store: 2, members: [], at: 1), at: F.at(seconds: 1))
        // A wake-up is handed over within `receive`; closing then ends the stream after whatever it holds.
        hub.close()
        #expect(await iterator.next() == nil, "store 2's change woke store 1's page")
    }
}
