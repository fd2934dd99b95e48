import BeaconMeshCore
import BeaconMeshWire
import Testing

@testable import BeaconMeshDashboard

@Suite("Chain board: webhook endpoints in coordinators' health")
struct ChainBoardWebhookTests {
    typealias F = BoardFixtures

    static func health(_ webhooks: [CoordinatorHealth.Webhook]) -> [UInt8] {
        WireCodec.encode(
            CoordinatorHealth(
                uptimeSeconds: 5, batches: 1, sightings: 1, events: 1, dropped: [:], gaps: 0, duplicates: 0, tracked: 0, rssBytes: 1,
                webhooks: webhooks))
    }

    @Test("a failing endpoint is on the overview under its coordinator, with its backlog and error; the page changes only when that does")
    func failingEndpointShown() throws {
        var board = ChainBoard(broker: "b")
        let status = WireCodec.encode(CoordinatorStatus(state: .online, stores: [1], startedAt: F.at(seconds: 0)))
        _ = board.receive(topic: F.topics.coordinatorStatus(id: "hq"), payload: status, at: F.at(seconds: 0))
        var failing = CoordinatorHealth.Webhook(name: "crm", backlog: 42)
        failing.failed = 7
        failing.error = "the receiver answered 503"
        failing.failingSince = F.at(seconds: 1)
        let report = Self.health([failing, CoordinatorHealth.Webhook(name: "bi", backlog: 0)])
        #expect(board.receive(topic: F.topics.coordinatorHealth(id: "hq"), payload: report, at: F.at(seconds: 2)).change == .chain)
        let coordinator = try #require(ChainPageData.json(board, at: F.at(seconds: 3))["coordinators"].flatMap(first))
        let crm = try #require(coordinator["webhooks"].flatMap(first))
        #expect(crm["name"] == .string("crm") && crm["state"] == .string("failing") && crm["backlog"] == .int(42))
        #expect(crm["error"] == .string("the receiver answered 503") && crm["since"] == .int(F.at(seconds: 1).milliseconds))
        // The next report with only its counts grown changes no page.
        failing.failed = 9
        let again = Self.health([failing, CoordinatorHealth.Webhook(name: "bi", backlog: 0)])
        #expect(board.receive(topic: F.topics.coordinatorHealth(id: "hq"), payload: again, at: F.at(seconds: 32)).change == .none)
        // Delivered again: ok, with nothing waiting.
        let recovered = Self.health([CoordinatorHealth.Webhook(name: "crm", backlog: 0), CoordinatorHealth.Webhook(name: "bi", backlog: 0)])
        #expect(board.receive(topic: F.topics.coordinatorHealth(id: "hq"), payload: recovered, at: F.at(seconds: 62)).change == .chain)
        let ok = try #require(ChainPageData.json(board, at: F.at(seconds: 63))["coordinators"].flatMap(first)?["webhooks"].flatMap(first))
        #expect(ok["state"] == .string("ok") && ok["error"] == .null)
        // A report that is not a health report is dropped and counted.
        #expect(
            board.receive(topic: F.topics.coordinatorHealth(id: "hq"), payload: Array("{".utf8), at: F.at(seconds: 70)).dropReason != nil)
        #expect(DashboardFeed.filters(stores: [], topics: F.topics).contains("beaconmesh/v1/coordinators/+/health"))
    }

    private func first(_ value: JSONValue) -> JSONValue? {
        guard case .array(let items) = value else { return nil }
        return items.first
    }
}
