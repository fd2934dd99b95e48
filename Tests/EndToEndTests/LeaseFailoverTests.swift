import BeaconMeshTesting
import Foundation
import Testing

/// Coordinators that stand in for each other: real `beacon-coordinator` processes sharing one PostgreSQL registry (a
/// server of the test's own) and one mosquitto, with `lease: {ttl: 2s}`. One of them may reach the database through a
/// relay the test cuts. Everything the broker carries about the stores and the coordinators is recorded in order.
struct LeaseChain {
    static let ttl = 2
    let base: ChainInfrastructure
    var server: PostgresServer { base.server }
    var broker: MosquittoBroker { base.broker }
    var relay: TCPRelay { base.relay }
    /// Events of every store and every coordinator's status, in arrival order.
    var watch: Subscription { base.watch }

    static let members = """
        id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt
        ana,Ana Souza,Flat white,ibeacon:\(Mesh.uuid):1:1,,11,1763683200000,1735689600000
        zoe,Zoë Martin,,ibeacon:\(Mesh.uuid):1:4,,0,,
        kim,Kim Lee,,ibeacon:\(Mesh.uuid):1:5,,0,,
        """

    static func start() async throws -> LeaseChain {
        LeaseChain(
            base: try await ChainInfrastructure.start(
                members: members, filters: ["beaconmesh/v1/stores/+/events", "beaconmesh/v1/coordinators/+/status"]))
    }

    /// Starts coordinator `id` listing `stores` (departments 10 and 20 each); it reaches the database through the relay
    /// if `throughRelay`. Waits until it runs.
    func startCoordinator(id: String, stores: [Int], throughRelay: Bool = false, extra: String = "") async throws -> TestProcess {
        let database = throughRelay ? base.relayURL : base.url
        let storeList = stores.map { store in
            """
              - id: \(store)
                name: Store \(store)
                greeting: "Welcome back, {name}! Visit {visits}."
                departments:
                  - {id: 10, name: Clothing}
            """
        }.joined(separator: "\n")
        let config = """
            id: \(id)
            broker: {url: "\(broker.url)"}
            database: "\(database)"
            members: members.csv
            lease: {ttl: \(Self.ttl)s}
            presence: {staleAfter: 3s, exitAfter: 2s, switchMargin: 4, switchDwell: 1s, visitGap: 20m}
            stores:
            \(storeList)
            \(extra)
            """
        return try await base.startCoordinator(name: id, config: config)
    }

    /// The latest status coordinator `id` published (retained).
    func status(of id: String) -> [String: Any]? {
        watch.lines.last { Mesh.topic(of: $0) == "beaconmesh/v1/coordinators/\(id)/status" }.flatMap(Mesh.payload(of:))
    }

    /// The stores coordinator `id` last said it decides for (none while offline).
    func active(_ id: String) -> [Int] {
        guard let status = status(of: id), status["state"] as? String == "online" else { return [] }
        return (status["active"] as? [Int]) ?? []
    }

    /// Waits until coordinator `id` says it decides for exactly `stores`.
    func waitUntil(_ id: String, decides stores: [Int], timeout: Duration) async -> Bool {
        await eventually(timeout: timeout, interval: .milliseconds(20)) { active(id) == stores }
    }

    /// The index in `watch.lines` of the first status of `id` that decides for `store`.
    func takeOverLine(of store: Int, by id: String) -> Int? {
        watch.lines.firstIndex { line in
            Mesh.topic(of: line) == "beaconmesh/v1/coordinators/\(id)/status"
                && ((Mesh.payload(of: line)?["active"] as? [Int])?.contains(store) ?? false)
        }
    }

    /// The member with beacon `minor` in store `store` for `seconds`: a reading every 250 ms from a node of their own
    /// (department 10), then silence.
    func walk(store: Int, minor: Int, seconds: Double) async throws {
        let boot = "w\(minor)-\(UInt32.random(in: 0...UInt32.max))"
        try await TopicPublisher.paced(
            port: broker.port, topic: "beaconmesh/v1/stores/\(store)/departments/10/nodes/m\(minor)/sightings",
            count: Int(seconds * 4), every: .milliseconds(250)
        ) { seq in
            Mesh.batch(store: store, department: 10, node: "m\(minor)", boot: boot, seq: seq + 1, minor: minor, at: Mesh.nowMilliseconds)
        }
    }

    /// Every event line of `store`, in order.
    func eventLines(store: Int) -> [String] {
        watch.lines.filter { Mesh.topic(of: $0) == "beaconmesh/v1/stores/\(store)/events" }
    }

    /// Events of `type` in `store` about member `member`.
    func events(_ type: String, store: Int, member: String) -> [[String: Any]] {
        eventLines(store: store).compactMap(Mesh.payload(of:)).filter {
            $0["type"] as? String == type && ($0["member"] as? [String: Any])?["id"] as? String == member
        }
    }

    func waitFor(_ type: String, store: Int, member: String, count: Int = 1, timeout: Duration = .seconds(10)) async -> Bool {
        await eventually(timeout: timeout, interval: .milliseconds(50)) { events(type, store: store, member: member).count >= count }
    }

    /// The coordinator that published the event on `line` (event ids are `{coordinator id}/{random}-{n}`).
    static func publisher(of line: String) -> String? {
        (Mesh.payload(of: line)?["id"] as? String).flatMap { $0.split(separator: "/").first.map(String.init) }
    }

    /// Event ids seen more than once, in any store.
    var repeatedEventIDs: [String] {
        let ids = watch.lines.filter { Mesh.topic(of: $0).hasSuffix("/events") }.compactMap { Mesh.payload(of: $0)?["id"] as? String }
        return Dictionary(grouping: ids, by: { $0 }).filter { $0.value.count > 1 }.map(\.key)
    }

    /// The member's visit count in the registry.
    func visits(of member: String) throws -> Int? { try base.visits(of: member) }

    /// Waits until the registry counts Ana's visit (11 before): her arrival is written, so a new holder restores it.
    func anasArrivalWritten() async -> Bool {
        await eventually(timeout: .seconds(10), interval: .milliseconds(100)) { (try? visits(of: "ana")) == 12 }
    }

    /// Waits until `holder` has renewed every lease it holds while another coordinator stood by for the store: such a
    /// lease is fenced (its holder stops deciding when it cannot renew), and only a fenced lease is taken over once it
    /// runs out. A lease renewed with nobody standing by is not, and stays its holder's.
    func leasesFenced(of holder: String) async -> Bool {
        let database = String(base.url.split(separator: "/").last ?? "")
        return await eventually(timeout: .seconds(10), interval: .milliseconds(100)) {
            let unfenced = try? server.psql(
                "SELECT count(*) FROM store_lease WHERE holder = '\(holder)' AND NOT fenced", database: database)
            return unfenced?.hasPrefix("0") == true
        }
    }

    /// The index in `watch.lines` of the status saying coordinator `id` is offline (its last will), if any.
    func offlineLine(of id: String) -> Int? {
        watch.lines.firstIndex { line in
            Mesh.topic(of: line) == "beaconmesh/v1/coordinators/\(id)/status" && Mesh.payload(of: line)?["state"] as? String == "offline"
        }
    }

    func stop(_ coordinators: [TestProcess]) async { await base.stop(coordinators) }
}

@Suite("Coordinators standing in for each other through leases", .serialized)
struct LeaseFailoverTests {
    @Test("kill -9 the active one mid-visit: the standby decides within ttl + 5 s, greets nobody twice, and the killed one stands by")
    func killedMidVisit() async throws {
        let chain = try await LeaseChain.start()
        let north = try await chain.startCoordinator(id: "north", stores: [1])
        #expect(await chain.waitUntil("north", decides: [1], timeout: .seconds(10)), "\(north.transcript)")
        let south = try await chain.startCoordinator(id: "south", stores: [1])
        #expect(await eventually(timeout: .seconds(10)) { chain.status(of: "south")?["state"] as? String == "online" })

        async let ana: Void = chain.walk(store: 1, minor: 1, seconds: 12)
        #expect(await chain.waitFor("arrived", store: 1, member: "ana"), "\(north.transcript)")
        #expect(await chain.anasArrivalWritten())
        north.send(SIGKILL)
        let killedAt = ContinuousClock.now
        #expect(await chain.waitUntil("south", decides: [1], timeout: .seconds(LeaseChain.ttl + 5)), "\(south.transcript)")
        let takeOver = killedAt.duration(to: .now)
        // Kim arrives after the take-over: greeted once, by the new holder.
        try await chain.walk(store: 1, minor: 5, seconds: 3)
        try await ana
        #expect(await chain.waitFor("left", store: 1, member: "ana"))
        #expect(await chain.waitFor("left", store: 1, member: "kim"))
        // South publishes in order and north is dead: a second greeting or leaving would be on the watch by now.
        #expect(chain.events("arrived", store: 1, member: "ana").count == 1, "Ana not greeted again: \(chain.eventLines(store: 1))")
        #expect(chain.events("left", store: 1, member: "ana").count == 1, "Ana leaves once")
        #expect(chain.events("arrived", store: 1, member: "kim").count == 1)
        #expect(chain.events("left", store: 1, member: "kim").count == 1)
        let kim = try #require(chain.eventLines(store: 1).first { $0.contains("\"arrived\"") && $0.contains("\"kim\"") })
        #expect(LeaseChain.publisher(of: kim) == "south")
        // Exactly one decides: south's first status deciding store 1 comes after north's last will.
        let killed = try #require(chain.offlineLine(of: "north"), "\(chain.watch.lines)")
        #expect(try #require(chain.takeOverLine(of: 1, by: "south")) > killed, "\(chain.watch.lines)")

        // The killed one, restarted, stands by.
        let restarted = try await chain.startCoordinator(id: "north", stores: [1])
        try await Task.sleep(for: .seconds(Double(LeaseChain.ttl) + 1))
        #expect(chain.status(of: "north")?["state"] as? String == "online")
        #expect(chain.active("north") == [] && chain.active("south") == [1])
        #expect(chain.repeatedEventIDs.isEmpty, "\(chain.repeatedEventIDs)")
        #expect(await eventually(timeout: .seconds(5)) { (try? chain.visits(of: "ana")) == 12 && (try? chain.visits(of: "kim")) == 1 })
        print("lease take-over after kill -9: \(takeOver)")
        await chain.stop([restarted, south])
    }

    @Test(
        "a lone coordinator (nobody stood by) killed mid-visit, replaced by one with another id: it decides the store within ttl + 5 s, Ana stays present, nobody greeted twice"
    )
    func loneHolderReplaced() async throws {
        let chain = try await LeaseChain.start()
        let north = try await chain.startCoordinator(id: "north", stores: [1])
        #expect(await chain.waitUntil("north", decides: [1], timeout: .seconds(10)), "\(north.transcript)")
        async let ana: Void = chain.walk(store: 1, minor: 1, seconds: 14)
        #expect(await chain.waitFor("arrived", store: 1, member: "ana"), "\(north.transcript)")
        #expect(await chain.anasArrivalWritten())
        north.send(SIGKILL)
        _ = await north.waitForExit(timeout: .seconds(5))
        // A new server with another id: its start is the later of the two moments the bound counts from.
        let started = ContinuousClock.now
        let east = try await chain.startCoordinator(id: "east", stores: [1])
        #expect(
            await chain.waitUntil("east", decides: [1], timeout: .seconds(LeaseChain.ttl + 5)),
            "the store a lone holder left was never taken: \(east.transcript)")
        let takeOver = started.duration(to: .now)
        try await ana
        #expect(await chain.waitFor("left", store: 1, member: "ana"), "\(east.transcript)")
        #expect(chain.events("arrived", store: 1, member: "ana").count == 1, "Ana greeted once: \(chain.eventLines(store: 1))")
        #expect(chain.events("left", store: 1, member: "ana").count == 1, "Ana leaves once: \(chain.eventLines(store: 1))")
        let left = try #require(chain.eventLines(store: 1).last { $0.contains(#""type":"left""#) })
        #expect(LeaseChain.publisher(of: left) == "east")
        #expect(EventGrammar.violations(inLines: chain.eventLines(store: 1)).isEmpty, "\(chain.eventLines(store: 1))")
        #expect(await eventually(timeout: .seconds(5)) { (try? chain.visits(of: "ana")) == 12 }, "one visit counted")
        print("lease taken from a lone holder replaced by another id: \(takeOver)")
        await chain.stop([east])
    }

    @Test("the active one frozen (SIGSTOP) past the ttl, then resumed, publishes not one decision after the standby took over")
    func frozenPastTheTTL() async throws {
        let chain = try await LeaseChain.start()
        let north = try await chain.startCoordinator(id: "north", stores: [1])
        #expect(await chain.waitUntil("north", decides: [1], timeout: .seconds(10)))
        let south = try await chain.startCoordinator(id: "south", stores: [1])
        async let ana: Void = chain.walk(store: 1, minor: 1, seconds: 14)
        #expect(await chain.waitFor("arrived", store: 1, member: "ana"), "\(north.transcript)")
        #expect(await chain.anasArrivalWritten())
        north.send(SIGSTOP)
        // South decides once north's lease ran out on the database's clock: north was frozen past the ttl.
        #expect(await chain.waitUntil("south", decides: [1], timeout: .seconds(LeaseChain.ttl + 5)), "\(south.transcript)")
        north.send(SIGCONT)
        // Resumed: it says it stands by, and meanwhile Zoë comes and Ana goes.
        #expect(await eventually(timeout: .seconds(5)) { chain.status(of: "north").map { ($0["active"] as? [Int]) == [] } ?? false })
        try await chain.walk(store: 1, minor: 4, seconds: 3)
        try await ana
        #expect(await chain.waitFor("left", store: 1, member: "ana"))
        #expect(await chain.waitFor("left", store: 1, member: "zoe"))
        try await Task.sleep(for: .seconds(3))
        let takenAt = try #require(chain.takeOverLine(of: 1, by: "south"))
        let after = chain.watch.lines[takenAt...].filter { Mesh.topic(of: $0) == "beaconmesh/v1/stores/1/events" }
        #expect(!after.isEmpty)
        #expect(after.allSatisfy { LeaseChain.publisher(of: $0) == "south" }, "\(after)")
        #expect(chain.events("arrived", store: 1, member: "ana").count == 1 && chain.events("left", store: 1, member: "ana").count == 1)
        #expect(chain.events("arrived", store: 1, member: "zoe").count == 1 && chain.events("left", store: 1, member: "zoe").count == 1)
        #expect(chain.repeatedEventIDs.isEmpty)
        #expect(await eventually(timeout: .seconds(5)) { (try? chain.visits(of: "ana")) == 12 && (try? chain.visits(of: "zoe")) == 1 })
        await chain.stop([north, south])
    }

    @Test("the active one cut off from the database, not the broker, stops deciding within the ttl; the standby takes over")
    func cutOffFromTheDatabase() async throws {
        let chain = try await LeaseChain.start()
        let north = try await chain.startCoordinator(id: "north", stores: [1], throughRelay: true)
        #expect(await chain.waitUntil("north", decides: [1], timeout: .seconds(10)))
        let south = try await chain.startCoordinator(id: "south", stores: [1])
        async let ana: Void = chain.walk(store: 1, minor: 1, seconds: 12)
        #expect(await chain.waitFor("arrived", store: 1, member: "ana"), "\(north.transcript)")
        #expect(await chain.anasArrivalWritten())
        chain.relay.cut()
        let cutAt = ContinuousClock.now
        #expect(await chain.waitUntil("north", decides: [], timeout: .seconds(LeaseChain.ttl)), "\(north.transcript)")
        let stoodDown = cutAt.duration(to: .now)
        #expect(await chain.waitUntil("south", decides: [1], timeout: .seconds(LeaseChain.ttl + 5)), "\(south.transcript)")
        try await chain.walk(store: 1, minor: 4, seconds: 3)
        try await ana
        #expect(await chain.waitFor("left", store: 1, member: "ana"))
        #expect(await chain.waitFor("left", store: 1, member: "zoe"))
        try await Task.sleep(for: .seconds(2))
        #expect(chain.events("arrived", store: 1, member: "ana").count == 1 && chain.events("left", store: 1, member: "ana").count == 1)
        #expect(chain.events("arrived", store: 1, member: "zoe").count == 1)
        let takenAt = try #require(chain.takeOverLine(of: 1, by: "south"))
        #expect(
            chain.watch.lines[takenAt...].filter { Mesh.topic(of: $0) == "beaconmesh/v1/stores/1/events" }.allSatisfy {
                LeaseChain.publisher(of: $0) == "south"
            })
        #expect(chain.repeatedEventIDs.isEmpty)
        print("stood down after the database cut: \(stoodDown)")
        await chain.stop([north, south])
    }

    @Test("three coordinators, three stores: a killed one's stores move to the two others, and only its stores")
    func threeServers() async throws {
        let chain = try await LeaseChain.start()
        // Each store is listed by two coordinators; started in this order, east holds 1 and 2, west 3, south none.
        let east = try await chain.startCoordinator(id: "east", stores: [1, 2])
        #expect(await chain.waitUntil("east", decides: [1, 2], timeout: .seconds(10)))
        let west = try await chain.startCoordinator(id: "west", stores: [2, 3])
        #expect(await chain.waitUntil("west", decides: [3], timeout: .seconds(10)))
        let south = try await chain.startCoordinator(id: "south", stores: [3, 1])
        #expect(await eventually(timeout: .seconds(10)) { chain.status(of: "south")?["state"] as? String == "online" })
        #expect(chain.active("south") == [])
        #expect(await chain.leasesFenced(of: "east"), "\(east.transcript)")
        east.send(SIGKILL)
        #expect(await chain.waitUntil("south", decides: [1], timeout: .seconds(LeaseChain.ttl + 5)), "\(south.transcript)")
        #expect(await chain.waitUntil("west", decides: [2, 3], timeout: .seconds(LeaseChain.ttl + 5)), "\(west.transcript)")
        // Store 3 never left west; south never decided for it.
        let statuses = chain.watch.lines.filter { Mesh.topic(of: $0).hasSuffix("/status") }.compactMap(Mesh.payload(of:))
        #expect(
            !chain.watch.lines.contains {
                Mesh.topic(of: $0).hasSuffix("/south/status") && ((Mesh.payload(of: $0)?["active"] as? [Int])?.contains(3) ?? false)
            })
        #expect(statuses.count >= 4)
        // South took store 1 only once east was gone (its last will), not while both ran.
        let killed = try #require(chain.offlineLine(of: "east"), "\(chain.watch.lines)")
        #expect(try #require(chain.takeOverLine(of: 1, by: "south")) > killed, "\(chain.watch.lines)")
        // A visit in each store now: greeted once each, by its new holder.
        async let one: Void = chain.walk(store: 1, minor: 1, seconds: 3)
        async let two: Void = chain.walk(store: 2, minor: 4, seconds: 3)
        async let three: Void = chain.walk(store: 3, minor: 5, seconds: 3)
        _ = try await (one, two, three)
        #expect(await chain.waitFor("left", store: 1, member: "ana"))
        #expect(await chain.waitFor("left", store: 2, member: "zoe"))
        #expect(await chain.waitFor("left", store: 3, member: "kim"))
        // Each holder publishes in order, and a visit's last event is its leaving: a second greeting would be here.
        for (store, member, holder) in [(1, "ana", "south"), (2, "zoe", "west"), (3, "kim", "west")] {
            let arrived = chain.eventLines(store: store).filter { $0.contains("\"arrived\"") && $0.contains("\"\(member)\"") }
            #expect(arrived.count == 1 && arrived.allSatisfy { LeaseChain.publisher(of: $0) == holder }, "\(arrived)")
        }
        #expect(chain.repeatedEventIDs.isEmpty)
        #expect(await eventually(timeout: .seconds(5)) { (try? chain.visits(of: "ana")) == 12 && (try? chain.visits(of: "zoe")) == 1 })
        await chain.stop([west, south])
    }
}
