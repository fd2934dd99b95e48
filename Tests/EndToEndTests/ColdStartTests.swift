import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshTesting
import Foundation
import Testing

/// A store's coordinator on the chain's PostgreSQL registry (a server of the test's own, reached through a relay the
/// test cuts), restarted while the line is down: it starts from its local cache (`cache:`), and catches up when the
/// line is back.
@Suite("A coordinator's cold start without the database, from its local cache", .serialized)
struct ColdStartTests {
    static let members = """
        id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt
        ana,Ana Souza,Flat white,ibeacon:\(Mesh.uuid):1:1,,11,1763683200000,1735689600000
        zoe-unique-id,Zoe Cachedname,Rooibos,ibeacon:\(Mesh.uuid):1:4,,0,,
        """

    static func config(_ base: ChainInfrastructure) -> String {
        """
        id: store-2
        broker: {url: "\(base.broker.url)"}
        database: "\(base.relayURL)"
        members: members.csv
        cache: store-2.cache
        lease: {ttl: 4s}
        presence: {staleAfter: 3s, exitAfter: 2s, switchMargin: 4, switchDwell: 1s, visitGap: 20m}
        stores:
          - id: 2
            name: Porto
            greeting: "Welcome back, {name}! Visit {visits}."
            departments:
              - {id: 10, name: Clothing}
        """
    }

    /// Readings of the member with beacon `minor` in store 2 for `seconds`; returns when the first was sent.
    static func visit(_ base: ChainInfrastructure, minor: Int, seconds: Int = 2) async throws -> Int64 {
        let first = Mesh.nowMilliseconds
        try await TopicPublisher.paced(
            port: base.broker.port, topic: "beaconmesh/v1/stores/2/departments/10/nodes/a/sightings", count: seconds * 4,
            every: .milliseconds(250)
        ) { seq in
            let at = seq == 0 ? first : Mesh.nowMilliseconds
            return Mesh.batch(store: 2, department: 10, boot: "b-\(minor)-\(first)", seq: seq + 1, minor: minor, at: at)
        }
        return first
    }

    static func arrivals(_ base: ChainInfrastructure) -> [[String: Any]] {
        base.watch.lines.filter { Mesh.topic(of: $0) == "beaconmesh/v1/stores/2/events" }.compactMap(Mesh.payload(of:))
            .filter { $0["type"] as? String == "arrived" }
    }

    static func cacheText(_ path: String) -> String {
        (FileManager.default.contents(atPath: path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    @Test(
        "restarted (twice) while PostgreSQL is cut off: greets a known member within 2 s from its cache, a member forgotten meanwhile is gone from the cache and not greeted once the database is back, visits count once"
    )
    func coldStartFromTheCache() async throws {
        let base = try await ChainInfrastructure.start(
            members: Self.members, filters: ["beaconmesh/v1/stores/+/events", "beaconmesh/v1/stores/+/presence"])
        let health = try await MosquittoClients.subscribe(
            port: base.broker.port, filter: "beaconmesh/v1/coordinators/store-2/health", qos: 0)
        var porto = try await base.startCoordinator(name: "store-2", config: Self.config(base))
        let cache = base.directory + "/store-2.cache"
        // The cache is written soon after the start, readable by the coordinator's user only.
        #expect(
            await eventually(timeout: .seconds(15)) {
                Self.cacheText(cache).contains("Zoe Cachedname") && Self.cacheText(cache).contains(#""leases":[{"store":2,"#)
            }, "\(porto.transcript)")
        let mode = (try FileManager.default.attributesOfItem(atPath: cache)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "cache mode \(String(mode ?? 0, radix: 8))")

        // The line to the database goes down, and the back office reboots.
        base.relay.cut()
        _ = await porto.stop(with: SIGKILL, timeout: .seconds(10))
        porto = try await base.startCoordinator(name: "store-2", config: Self.config(base))
        #expect(porto.stderrLines.contains { $0.contains("starting from the local cache") }, "\(porto.transcript)")
        // Head office forgets Zoë meanwhile (straight to the database).
        let forget = try Mesh.program("beacon-coordinator", ["members", "forget", "zoe-unique-id", "--db", base.url])
        #expect(await forget.waitForExit(timeout: .seconds(30)) == .exited(0), "\(forget.transcript)")

        // Ana is greeted from the cache, within 2 s of her first reading.
        let firstReading = try await Self.visit(base, minor: 1)
        #expect(await eventually(timeout: .seconds(10)) { Self.arrivals(base).count == 1 }, "\(porto.transcript)")
        let arrived = Self.arrivals(base).first
        let at = (arrived?["at"] as? NSNumber)?.int64Value ?? 0
        #expect(at - firstReading <= 2000, "greeted \(at - firstReading) ms after her first reading")
        #expect(arrived?["greeting"] as? String == "Welcome back, Ana Souza! Visit 12.", "\(String(describing: arrived))")
        // Health says the coordinator runs without its database, from the cache.
        let saying = await health.waitForLine(timeout: .seconds(10)) { $0.contains("local cache") && $0.contains("failing") }
        #expect(saying != nil, "\(health.lines.suffix(2))")

        // The back office restarts again before the line is back: the count waiting for the database is kept in the cache.
        #expect(await porto.stop(with: SIGTERM, timeout: .seconds(30)) == .exited(0), "\(porto.transcript)")
        #expect(Self.cacheText(cache).contains(#""counts":[{"member":"ana","visits":1"#), "\(Self.cacheText(cache).suffix(600))")
        porto = try await base.startCoordinator(name: "store-2", config: Self.config(base))
        #expect(porto.stderrLines.contains { $0.contains("starting from the local cache") }, "\(porto.transcript)")

        // The line is back: the forgetting reaches the cache, Ana's visit is counted once.
        base.relay.restore()
        #expect(
            await eventually(timeout: .seconds(40)) {
                !Self.cacheText(cache).contains("zoe-unique-id") && Self.cacheText(cache).contains("Ana Souza")
            },
            "\(porto.transcript)")
        for trace in ["zoe-unique-id", "Zoe Cachedname", "Rooibos", "\(Mesh.uuid):1:4"] {
            #expect(!Self.cacheText(cache).contains(trace), "the cache still holds \(trace)")
        }
        #expect(await eventually(timeout: .seconds(30)) { (try? base.visits(of: "ana")) == 12 }, "\(porto.transcript)")
        let mark = base.watch.lines.count
        _ = try await Self.visit(base, minor: 4)
        #expect(await base.guestCameAndWent(store: 2, after: mark), "Zoë's fob, a guest's now: \(base.watch.lines.suffix(4))")
        #expect(try await base.writesSettled(of: "store-2"), "\(porto.transcript)")
        #expect(try base.visits(of: "ana") == 12, "counted once")
        #expect(Self.arrivals(base).count == 1, "Zoë, forgotten, is not greeted: \(Self.arrivals(base))")
        await health.stop()
        await base.stop([porto])
    }

    @Test(
        "cold-started while PostgreSQL is cut off with members' Eddystone-EID fobs: the cache holds no fob key, and once the line is back the fobs resolve (health counts them) and a member's fob greets her"
    )
    func fobsResolveOnceTheLineIsBack() async throws {
        let identityKey: [UInt8] = [0x5E, 0xC7, 0x11, 0xA0, 0x3B, 0x92, 0x4D, 0xE8, 0x76, 0x2F, 0xC1, 0x08, 0x9A, 0x63, 0xB5, 0xD4]
        let keyHex = identityKey.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let base = try await ChainInfrastructure.start(
            members: "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt,eid\nbea,Bea Lund,Chai,,,0,,,\(keyHex):10:0\n",
            filters: ["beaconmesh/v1/stores/+/events", "beaconmesh/v1/coordinators/store-2/health"])
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: base.directory + "/secrets.key"))
        let config = Self.config(base) + "\nsecretsKeyFile: secrets.key\n"
        var porto = try await base.startCoordinator(name: "store-2", config: config)
        let cache = base.directory + "/store-2.cache"
        #expect(await eventually(timeout: .seconds(15)) { Self.cacheText(cache).contains("Bea Lund") }, "\(porto.transcript)")
        #expect(!Self.cacheText(cache).lowercased().contains(keyHex), "no fob key in the cache")

        base.relay.cut()
        _ = await porto.stop(with: SIGKILL, timeout: .seconds(10))
        porto = try await base.startCoordinator(name: "store-2", config: config)
        #expect(porto.stderrLines.contains { $0.contains("starting from the local cache") }, "\(porto.transcript)")
        base.relay.restore()
        // Health counts her fob once the registry is read again.
        @Sendable func fobs(_ line: String) -> Int? {
            guard line.contains("/health ") else { return nil }
            return (Mesh.payload(of: line)?["fobs"] as? [String: Any])?["count"] as? Int
        }
        #expect(
            await eventually(timeout: .seconds(40)) { base.watch.lines.contains { fobs($0) == 1 } },
            "\(base.watch.lines.filter { $0.contains("/health ") }.suffix(1))\n\(porto.transcript)")
        let fob = try #require(EddystoneEID(identityKey: identityKey, rotationExponent: 10))
        try await TopicPublisher.paced(
            port: base.broker.port, topic: "beaconmesh/v1/stores/2/departments/10/nodes/a/sightings", count: 8,
            every: .milliseconds(250)
        ) { seq in
            let now = Mesh.nowMilliseconds
            return Mesh.batch(
                store: 2, department: 10, boot: "fob", seq: seq + 1, beacon: fob.beaconKey(counter: UInt32(now / 1000)).description,
                rssi: -58, at: now)
        }
        #expect(
            await eventually(timeout: .seconds(10)) {
                Self.arrivals(base).contains { ($0["member"] as? [String: Any])?["id"] as? String == "bea" }
            }, "\(base.watch.lines.suffix(4))\n\(porto.transcript)")
        #expect(!porto.transcript.lowercased().contains(keyHex))
        await base.stop([porto])
    }
}

@Suite("A coordinator whose database refuses connections")
struct RefusedDatabaseTests {
    /// The CPU time (user + system) `pid` has used, from `/proc/PID/stat`.
    static func cpuTime(of pid: pid_t) -> Duration? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: end)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based, in clock ticks).
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        let ticks = Int64(sysconf(Int32(_SC_CLK_TCK)))
        return .milliseconds((user + system) * 1000 / ticks)
    }

    @Test("it waits between attempts to read the registry instead of spinning on the refusals")
    func doesNotSpin() async throws {
        let base = try await ChainInfrastructure.start(members: ColdStartTests.members, filters: ["beaconmesh/v1/stores/+/events"])
        let porto = try await base.startCoordinator(name: "store-2", config: ColdStartTests.config(base))
        try await Task.sleep(for: .seconds(1))
        // Nothing listens on the relay's port any more: every connection is refused at once.
        base.relay.stop()
        try await Task.sleep(for: .seconds(2))
        let before = try #require(Self.cpuTime(of: porto.processID))
        try await Task.sleep(for: .seconds(6))
        let used = try #require(Self.cpuTime(of: porto.processID)) - before
        #expect(used < .milliseconds(1500), "\(used) of CPU in 6 s with the database refusing: \(porto.transcript.suffix(1500))")
        #expect(porto.isRunning)
        await base.stop([porto])
    }
}
