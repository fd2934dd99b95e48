import ArgumentParser
import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Foundation
import Logging

/// The registry on SQLite or PostgreSQL: importing a chain's members, reading them all (a coordinator's start),
/// sustained visit writes through the coordinator's `RegistryWriter`, and how soon a member change reaches another
/// coordinator's change feed.
struct RegistryBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "registry",
        abstract: "Registry: import, read-all, visit writes/s through the writer, change-feed latency (SQLite or PostgreSQL).")

    @Option(
        help: ArgumentHelp("The registry: a SQLite file or a postgres:// URL (password: BEACONMESH_DB_PASSWORD).", valueName: "FILE|URL"))
    var db: String

    @Option(help: "Members in the registry (imported first when fewer are there).")
    var members: Int = 100_000

    @Option(help: "Visit writes per second offered to the writer.")
    var rate: Int = 2_000

    @Option(help: "How long visits are offered, in seconds.")
    var seconds: Int = 10

    @Option(help: "Member changes whose arrival at another connection's change feed is timed.")
    var changes: Int = 50

    func run() throws {
        let location = try RegistryLocation(db)
        let registry = try location.open()
        let present = try registry.allMembers().count
        if present < members {
            let uuid = BenchBeacons.uuid
            let records = (present..<members).map { index in
                MemberRecord(
                    profile: MemberProfile(id: "m\(index)", name: "Member \(index)", favoriteDrink: "Tea"),
                    beacons: [.iBeacon(uuid: uuid, major: UInt16(1 + index / 60_000), minor: UInt16(index % 60_000))],
                    createdAt: Timestamp(milliseconds: 1_735_689_600_000))
            }
            let started = ContinuousClock.now
            try registry.merge(records)
            print("import: \(records.count) members in \(Self.seconds(ContinuousClock.now - started)) s")
        }
        let reading = ContinuousClock.now
        let contents = try registry.contents()
        print("read all (coordinator start): \(contents.profiles.count) members in \(Self.seconds(ContinuousClock.now - reading)) s")

        // Visits offered at `rate` for `seconds`, each a count and an open visit, then the queue drained.
        let writer = try RegistryWriter(registry: registry, stores: [1], logger: Logger(label: "bench"), clock: { WallClock.now() })
        let ids = Array(contents.profiles.keys)
        let started = ContinuousClock.now
        var offered = 0
        var maxQueued = 0
        while ContinuousClock.now - started < .seconds(seconds) {
            let due = Int(Double(rate) * Self.seconds(ContinuousClock.now - started))
            var changes = RegistryChanges()
            while offered < due {
                let member = ids[offered % ids.count]
                let now = WallClock.now()
                changes.countVisit(of: member, at: now)
                changes.save(
                    PresenceEngine.Visit(
                        member: member, store: 1, arrivedAt: now, department: 10, inDepartmentSince: now, lastSeen: now, leftAt: nil))
                offered += 1
            }
            writer.enqueue(changes)
            maxQueued = max(maxQueued, writer.status.queued)
            Thread.sleep(forTimeInterval: 0.01)
        }
        let offering = ContinuousClock.now - started
        while writer.status.queued > 0 { Thread.sleep(forTimeInterval: 0.005) }
        let drained = ContinuousClock.now - started
        print(
            "visit writes: \(offered) offered in \(Self.seconds(offering)) s, all written after \(Self.seconds(drained)) s: "
                + "\(Int(Double(offered) / Self.seconds(drained)))/s; most rows waiting at once: \(maxQueued)")

        // Member changes made here, seen by another connection's feed.
        let watcher = try location.open()
        let feed = try watcher.changeFeed()
        defer { feed.close() }
        _ = try feed.next(timeout: .seconds(3))
        var delays: [Double] = []
        for index in 0..<changes {
            guard var record = try registry.member(id: ids[index % ids.count]) else { continue }
            record.profile.name = "Renamed \(index)"
            let changed = ContinuousClock.now
            try registry.upsert(record)
            while true {
                let change = try feed.next(timeout: .seconds(5))
                if change == .everything || change == .members([record.id]) || ContinuousClock.now - changed > .seconds(5) { break }
            }
            delays.append(Self.seconds(ContinuousClock.now - changed) * 1000)
        }
        delays.sort()
        if !delays.isEmpty {
            let p50 = delays[delays.count / 2]
            let p99 = delays[min(delays.count - 1, delays.count * 99 / 100)]
            print("member change to another coordinator's feed: p50 \(Int(p50)) ms, p99 \(Int(p99)) ms (\(delays.count) changes)")
        }
        withExtendedLifetime(writer) {}
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
