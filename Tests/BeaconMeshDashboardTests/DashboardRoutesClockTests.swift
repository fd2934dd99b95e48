import BeaconMeshCore
import BeaconMeshTesting
import BeaconMeshWire
import Hummingbird
import HummingbirdTesting
import Testing

@testable import BeaconMeshDashboard

/// The routes tell time by the clock they are given, not the machine's: the pages' data can be tested without
/// sleeping, at any hour of a scripted day.
@Suite("Dashboard routes' clock")
struct DashboardRoutesClockTests {
    typealias F = BoardFixtures

    @Test("the store and chain API answer at the clock's time, and a highlighted arrival fades as that clock moves")
    func apiAnswersAtTheClocksTime() async throws {
        let clock = ManualClock(now: F.at(seconds: 10))
        let hub = DashboardHub(board: ChainBoard(broker: "b"))
        hub.receive(topic: F.topics.presence(store: 1), payload: F.snapshot(members: [], at: 5), at: F.at(seconds: 5))
        hub.receive(
            topic: F.topics.presence(store: 1), payload: F.snapshot(members: [(F.member("ana", "Ana"), 10, 10)], at: 10),
            at: F.at(seconds: 10))
        let app = Application(router: DashboardRoutes.router(hub: hub, metricsText: { "" }, clock: clock))
        try await app.test(.router) { client in
            let first = try await Self.json(client, "/api/stores/1")
            #expect(first["now"] == .int(F.at(seconds: 10).milliseconds))
            #expect(Self.highlighted(first) == [true], "a member who just arrived is highlighted")
            let chain = try await Self.json(client, "/api/stores")
            #expect(chain["now"] == .int(F.at(seconds: 10).milliseconds))

            clock.advance(by: .seconds(60))
            let later = try await Self.json(client, "/api/stores/1")
            #expect(later["now"] == .int(F.at(seconds: 70).milliseconds))
            #expect(Self.highlighted(later) == [false], "the highlight outlived the clock's minute")
        }
        hub.close()
    }

    private static func json(_ client: some TestClientProtocol, _ uri: String) async throws -> JSONValue {
        try await client.execute(uri: uri, method: .get) { response in
            #expect(response.status == .ok, "\(uri): \(response.status)")
            return try WireCodec.parse(Array(buffer: response.body))
        }
    }

    private static func highlighted(_ page: JSONValue) -> [Bool] {
        guard case .array(let members)? = page["members"] else { return [] }
        return members.map { $0["highlighted"] == .bool(true) }
    }
}
