import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshWire
import Foundation
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// What a coordinator state writes to the registry while it runs, so that a restart (even `kill -9`) finds it.
@Suite("Coordinator visit saving")
struct VisitSavingTests {
    @Test("an arrival is saved at once; the last-seen time of an open visit within 30 s, a slice of members per tick")
    func visitsSaved() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-visits-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let registry = try SQLiteRegistry(path: folder + "/db.sqlite")
        let uuid = "0cf052c2-97ca-407c-84f8-b62aac4e9020"
        // Many members, so that one tick's slice does not cover everybody.
        var csv = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\n"
        for index in 1...500 { csv += "m\(index),Member \(index),,ibeacon:\(uuid):1:\(index),,0,,\n" }
        _ = try registry.merge(try MembersCSV.parse(csv, file: "members.csv"))

        var configuration = CoordinatorConfiguration(id: "test")
        var store = CoordinatorConfiguration.Store(id: 1, name: "San Francisco")
        var rules = PresenceRules()
        rules.exitAfter = .seconds(120)
        store.departments = [.init(id: 10, name: "Clothing", presence: rules)]
        configuration.stores = [store]
        configuration.presence = rules
        var logger = Logger(label: "test.visits")
        logger.logLevel = .critical
        let start = Timestamp(milliseconds: 1_763_769_600_000)
        var state = CoordinatorState(
            configuration: configuration, start: try .read(from: registry, at: start), logger: logger,
            topics: Topics(), startedAt: start, healthInterval: .seconds(30))

        let node = NodeAddress(store: 1, department: 10, node: "a")!
        var sequence: UInt64 = 0
        var lastHeard = start
        for step in 0..<(45 * 20) {
            let now = start + .milliseconds(Int64(step) * 50)
            if step % 10 == 0 {
                // Member 250 is heard twice a second.
                sequence += 1
                lastHeard = now
                let sighting = Sighting(
                    beacon: .iBeacon(uuid: BeaconUUID(uuid)!, major: 1, minor: 250), rssi: -60, count: 2, txPower: -59,
                    distance: 1, proximity: .near, lastSeen: now)
                let batch = SightingBatch(node: node, boot: "b", seq: sequence, sentAt: now, sightings: [sighting])
                let message = MQTTMessage(topic: Topics().sightings(node), payload: WireCodec.encode(batch), qos: .atLeastOnce)
                try registry.apply(state.handle([CoordinatorInput.decode(message, topics: Topics())], at: now).registry)
            }
            try registry.apply(state.tick(at: now).registry)
            if step == 40 {
                // Two seconds in: the arrival was saved when it happened.
                let saved = try #require(try registry.loadVisits().first { $0.member == "m250" })
                #expect(saved.leftAt == nil && saved.store == 1 && saved.department == 10)
            }
        }
        // 45 s in: the saved last-seen time is at most 30 s behind.
        let saved = try #require(try registry.loadVisits().first { $0.member == "m250" })
        #expect(lastHeard - saved.lastSeen <= .seconds(30), "saved last seen is \(lastHeard - saved.lastSeen) behind")
        #expect(saved.lastSeen - start >= .seconds(10))
    }
}
