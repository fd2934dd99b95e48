import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshTesting
import BeaconMeshWire
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@testable import BeaconMeshDashboard

extension SurveyRoutesTests {
    @Test(
        "the page's data lists the beacons the store hears, loudest first, named by member or reference: its first request subscribes to the store's sightings"
    )
    func heardBeacons() async throws {
        let fixture = try Fixture()
        let fob = Self.beacon
        let reference = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:9:1")!
        let stranger = BeaconKey("ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:5:5")!
        fixture.progress.owners.withLock { $0 = [fob: .member(id: "ana", name: "Ana Souza"), reference: .reference(department: 20)] }
        let sightings = "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings"
        try await fixture.application().test(.router) { client in
            let first = try WireCodec.parse(
                Array(try await Self.get(client, "/api/stores/1/survey", headers: fixture.browser("anna")).body.utf8))
            #expect(first["heard"] == .array([]), "nothing heard yet")
            #expect(await fixture.broker.waitForSubscriber(to: sightings, timeout: .seconds(5)), "store 1's sightings not subscribed")

            let batch = SightingBatch(
                node: NodeAddress(store: 1, department: 10, node: "a")!, boot: "b", seq: 1, sentAt: F.at(seconds: 99),
                sightings: [(stranger, -71.0), (fob, -52.5), (reference, -64.0)].map { beacon, rssi in
                    Sighting(
                        beacon: beacon, rssi: rssi, count: 2, txPower: nil, distance: nil, proximity: .near, lastSeen: F.at(seconds: 99))
                })
            fixture.hub.receive(topic: sightings, payload: WireCodec.encode(batch), at: F.at(seconds: 100))
            let reply = try await Self.get(client, "/api/stores/1/survey", headers: fixture.browser("anna"))
            #expect(reply.status == .ok)
            let data = try WireCodec.parse(Array(reply.body.utf8))
            #expect(
                data["heard"]
                    == .array([
                        .object([
                            ("beacon", .string(fob.description)), ("rssi", .double(-52.5)), ("department", .int(10)),
                            ("node", .string("a")),
                            ("member", .object([("id", .string("ana")), ("name", .string("Ana Souza"))])),
                        ]),
                        .object([
                            ("beacon", .string(reference.description)), ("rssi", .double(-64)), ("department", .int(10)),
                            ("node", .string("a")), ("reference", .object([("department", .int(20))])),
                        ]),
                        .object([
                            ("beacon", .string(stranger.description)), ("rssi", .double(-71)), ("department", .int(10)),
                            ("node", .string("a")),
                        ]),
                    ]), "\(reply.body)")

            // Ten seconds unheard, and the list is empty again; another store's user sees none of it.
            fixture.clock.advance(by: .seconds(11))
            let later = try WireCodec.parse(
                Array(try await Self.get(client, "/api/stores/1/survey", headers: fixture.browser("anna")).body.utf8))
            #expect(later["heard"] == .array([]))
            #expect(try await Self.get(client, "/api/stores/1/survey", headers: fixture.browser("bert")).status == .forbidden)
        }
    }

    @Test("a sighting batch under another node's topic, or unreadable, is dropped and lists nothing")
    func hostileSightings() throws {
        let fixture = try Fixture()
        let batch = SightingBatch(
            node: NodeAddress(store: 1, department: 20, node: "b")!, boot: "b", seq: 1, sentAt: F.at(seconds: 99),
            sightings: [
                Sighting(
                    beacon: Self.beacon, rssi: -50, count: 1, txPower: nil, distance: nil, proximity: .near, lastSeen: F.at(seconds: 99))
            ])
        let topic = "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings"
        #expect(fixture.hub.receive(topic: topic, payload: WireCodec.encode(batch), at: F.at(seconds: 100))?.reason == "absurd-value")
        #expect(fixture.hub.receive(topic: topic, payload: Array("{".utf8), at: F.at(seconds: 100))?.reason == "invalid-json")
        #expect(fixture.hub.read { $0.heard.heard(store: 1, at: F.at(seconds: 100)) }.isEmpty)
    }
}
