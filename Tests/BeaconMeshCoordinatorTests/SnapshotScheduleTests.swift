import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshWire
import Foundation
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// The presence snapshots a coordinator state hands out tick by tick: the contract's "on every change, at most 4
/// times a second, and every 30 s", spread over the ticks rather than all at once.
@Suite("Coordinator snapshot schedule")
struct SnapshotScheduleTests {
    private static let stores: [UInt16] = Array(1...20)
    private static let start = Timestamp(milliseconds: 1_763_769_600_000)

    private static func state() throws -> CoordinatorState {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-schedule-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var configuration = CoordinatorConfiguration(id: "test")
        configuration.stores = stores.map { id in
            var store = CoordinatorConfiguration.Store(id: id, name: "Store \(id)")
            store.departments = [.init(id: 10, name: "Clothing", presence: PresenceRules())]
            return store
        }
        var logger = Logger(label: "test.schedule")
        logger.logLevel = .critical
        let registry = try SQLiteRegistry(path: folder + "/db.sqlite")
        return CoordinatorState(
            configuration: configuration, start: try .read(from: registry, at: start), logger: logger,
            topics: Topics(), startedAt: start, healthInterval: .seconds(30))
    }

    /// Runs `seconds` of 50 ms ticks; before each tick every store's node sends a batch when `changing`.
    /// Returns when each store's snapshot was handed out, and the most handed out by one tick.
    private static func run(seconds: Int, changing: Bool) throws -> (times: [UInt16: [Timestamp]], mostPerTick: Int) {
        var state = try state()
        let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
        var times: [UInt16: [Timestamp]] = [:]
        var mostPerTick = 0
        for step in 0..<(seconds * 20) {
            let now = start + .milliseconds(Int64(step) * 50)
            if changing {
                for store in stores {
                    let node = NodeAddress(store: store, department: 10, node: "a")!
                    let guest = Sighting(
                        beacon: .iBeacon(uuid: uuid, major: store, minor: 7), rssi: -60 - Double(step % 5), count: 1,
                        txPower: -59, distance: 1, proximity: .near, lastSeen: now)
                    let batch = SightingBatch(node: node, boot: "b", seq: UInt64(step + 1), sentAt: now, sightings: [guest])
                    _ = state.handle([.sightings(batch)], at: now)
                }
            }
            let snapshots = state.tick(at: now).snapshots
            mostPerTick = max(mostPerTick, snapshots.count)
            for snapshot in snapshots { times[snapshot.store.id, default: []].append(now) }
        }
        return (times, mostPerTick)
    }

    /// The time between one snapshot of a store and the next.
    private static func gaps(_ times: [Timestamp]?) -> [Duration] {
        let times = times ?? []
        return zip(times, times.dropFirst()).map { $1 - $0 }
    }

    @Test("stores that change all the time get their 4 snapshots a second, spread over the ticks")
    func changingStores() throws {
        let (times, mostPerTick) = try Self.run(seconds: 5, changing: true)
        // 20 stores × 4 a second = 80 a second = 4 per 50 ms tick, never all 20 at once.
        #expect(mostPerTick == 4)
        for store in Self.stores {
            #expect(times[store, default: []].count >= 19, "store \(store): \(times[store, default: []]) in 5 s")
            #expect(Self.gaps(times[store]).allSatisfy { $0 >= .milliseconds(250) }, "store \(store): \(Self.gaps(times[store]))")
        }
    }

    @Test("quiet stores are sent once at the start and then every 30 s")
    func quietStores() throws {
        let (times, mostPerTick) = try Self.run(seconds: 65, changing: false)
        #expect(mostPerTick == 4)
        for store in Self.stores {
            #expect(times[store, default: []].count == 3, "store \(store): \(times[store, default: []]) in 65 s")
            #expect(
                Self.gaps(times[store]).allSatisfy { $0 >= .seconds(30) && $0 < .seconds(31) }, "store \(store): \(Self.gaps(times[store]))"
            )
        }
    }
}
