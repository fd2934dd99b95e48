import BeaconMeshTesting
import Foundation
import Testing

/// Two stores of one chain, each with its own coordinator, on one PostgreSQL registry (a server of the test's own),
/// one broker; store 2's coordinator may reach the database through a relay the test cuts.
private struct Chain {
    let base: ChainInfrastructure
    var lisboa: TestProcess
    var porto: TestProcess
    var server: PostgresServer { base.server }
    var url: String { base.url }
    var broker: MosquittoBroker { base.broker }
    var relay: TCPRelay { base.relay }
    var events: Subscription { base.watch }

    static let members = """
        id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt
        ana,Ana Souza,Flat white,ibeacon:\(Mesh.uuid):1:1,,11,1763683200000,1735689600000
        zoe,Zoë Martin,,ibeacon:\(Mesh.uuid):1:4,,0,,
        """

    static func start() async throws -> Chain {
        let base = try await ChainInfrastructure.start(
            members: members,
            filters: ["beaconmesh/v1/stores/+/events", "beaconmesh/v1/registry/events", "beaconmesh/v1/stores/+/presence"])
        let lisboa = try await startCoordinator(store: 1, database: base.url, on: base, members: true)
        let porto = try await startCoordinator(store: 2, database: base.relayURL, on: base, members: false)
        return Chain(base: base, lisboa: lisboa, porto: porto)
    }

    static func startCoordinator(
        store: Int, database: String, on base: ChainInfrastructure, members: Bool
    ) async throws -> TestProcess {
        try await base.startCoordinator(
            name: "store-\(store)",
            config: """
                id: store-\(store)
                broker: {url: "\(base.broker.url)"}
                database: "\(database)"
                \(members ? "members: members.csv" : "")
                presence: {staleAfter: 3s, exitAfter: 2s, switchMargin: 4, switchDwell: 1s, visitGap: 20m}
                stores:
                  - id: \(store)
                    name: Store \(store)
                    greeting: "Welcome back, {name}! Visit {visits}."
                    departments:
                      - {id: 10, name: Clothing}
                """)
    }

    /// A visit of the member with beacon `minor` to store `store`: readings for `seconds`, then silence until left.
    /// Each visit is its node's new boot, so that a second visit's batches are not dropped as the first one's again.
    func visit(store: Int, minor: Int, seconds: Int = 2) async throws {
        let boot = "b-\(store)-\(minor)-\(UInt32.random(in: 0...UInt32.max))"
        try await TopicPublisher.paced(
            port: broker.port, topic: "beaconmesh/v1/stores/\(store)/departments/10/nodes/a/sightings", count: seconds * 4,
            every: .milliseconds(250)
        ) { seq in
            Mesh.batch(store: store, department: 10, boot: boot, seq: seq + 1, minor: minor, at: Mesh.nowMilliseconds)
        }
    }

    func events(_ type: String, store: Int) -> [[String: Any]] {
        events.lines.filter { Mesh.topic(of: $0) == "beaconmesh/v1/stores/\(store)/events" }.compactMap(Mesh.payload(of:))
            .filter { $0["type"] as? String == type }
    }

    func waitFor(_ type: String, store: Int, count: Int = 1, timeout: Duration = .seconds(10)) async -> Bool {
        await eventually(timeout: timeout, interval: .milliseconds(50)) { events(type, store: store).count >= count }
    }

    func members(_ arguments: [String]) async throws -> TestProcess {
        let command = try Mesh.program("beacon-coordinator", ["members"] + arguments + ["--db", url])
        #expect(await command.waitForExit() == .exited(0), "\(command.transcript)")
        return command
    }

    func visits(of member: String) throws -> Int? { try base.visits(of: member) }

    /// Whether both coordinators read a change of the member `changed`, or the removal of `removed`, within 10 s.
    func bothRead(changed: String? = nil, removed: String? = nil) async -> Bool {
        async let lisboaRead = lisboa.readRegistryChange(changed: changed, removed: removed)
        async let portoRead = porto.readRegistryChange(changed: changed, removed: removed)
        return await (lisboaRead, portoRead) == (true, true)
    }

    func stop() async { await base.stop([lisboa, porto]) }
}

@Suite("A chain's coordinators on one PostgreSQL registry", .serialized)
struct ChainRegistryTests {
    @Test("a member's visits in two stores make one count, and the second store's greeting says so")
    func oneCountAcrossStores() async throws {
        let chain = try await Chain.start()
        try await chain.visit(store: 1, minor: 1)
        #expect(await chain.waitFor("arrived", store: 1), "\(chain.lisboa.transcript)")
        #expect(await chain.waitFor("left", store: 1))
        try await chain.visit(store: 2, minor: 1)
        #expect(await chain.waitFor("arrived", store: 2), "\(chain.porto.transcript)")
        let lisboa = chain.events("arrived", store: 1).first
        let porto = chain.events("arrived", store: 2).first
        #expect((lisboa?["visit"] as? [String: Any])?["number"] as? Int == 12)
        #expect((porto?["visit"] as? [String: Any])?["number"] as? Int == 13)
        #expect(porto?["greeting"] as? String == "Welcome back, Ana Souza! Visit 13.")
        #expect(await eventually(timeout: .seconds(5)) { (try? chain.visits(of: "ana")) == 13 })
        await chain.stop()
    }

    @Test("members add and forget through the command line reach both coordinators within 5 s, and forget leaves no row")
    func addAndForgetReachBoth() async throws {
        let chain = try await Chain.start()
        _ = try await chain.members([
            "add", "kim", "--name", "Kim Secretname", "--drink", "Rooibos", "--beacon", "ibeacon:\(Mesh.uuid):1:9",
        ])
        #expect(await chain.bothRead(changed: "kim"), "\(chain.lisboa.transcript)\n\(chain.porto.transcript)")
        async let inLisboa: Void = chain.visit(store: 1, minor: 9)
        async let inPorto: Void = chain.visit(store: 2, minor: 9)
        _ = try await (inLisboa, inPorto)
        #expect(await chain.waitFor("arrived", store: 1), "\(chain.lisboa.transcript)")
        #expect(await chain.waitFor("arrived", store: 2), "\(chain.porto.transcript)")
        let leftBoth = await chain.waitFor("left", store: 1, count: 1)
        #expect(leftBoth)
        #expect(await chain.waitFor("left", store: 2))

        _ = try await chain.members(["forget", "kim"])
        #expect(await chain.bothRead(removed: "kim"), "\(chain.lisboa.transcript)\n\(chain.porto.transcript)")
        let mark = chain.events.lines.count
        async let againLisboa: Void = chain.visit(store: 1, minor: 9)
        async let againPorto: Void = chain.visit(store: 2, minor: 9)
        _ = try await (againLisboa, againPorto)
        #expect(await chain.base.guestCameAndWent(store: 1, after: mark), "\(chain.events.lines.suffix(5))")
        #expect(await chain.base.guestCameAndWent(store: 2, after: mark), "\(chain.events.lines.suffix(5))")
        #expect(chain.events("arrived", store: 1).count == 1, "forgotten in store 1: not greeted")
        #expect(chain.events("arrived", store: 2).count == 1, "forgotten in store 2: not greeted")
        // The registry events are published (once, by one coordinator), and their rows deleted.
        let registry = chain.events.lines.filter { Mesh.topic(of: $0) == "beaconmesh/v1/registry/events" && $0.contains("\"kim\"") }
        #expect(registry.filter { $0.contains("member-added") }.count == 1, "\(registry)")
        #expect(registry.filter { $0.contains("member-forgotten") }.count == 1, "\(registry)")
        let database = String(chain.url.split(separator: "/").last ?? "")
        let dump = try chain.server.dumpData(database: database)
        for trace in ["kim", "Secretname", "Rooibos", "\(Mesh.uuid):1:9"] {
            #expect(!dump.contains(trace), "pg_dump --data-only still holds \(trace)")
        }
        #expect(dump.contains("Ana Souza"), "the dump is the registry's")
        await chain.stop()
    }

    @Test("a coordinator cut off from the database greets from memory; visits in both stores meanwhile all count after")
    func cutOffFromTheDatabase() async throws {
        let chain = try await Chain.start()
        let health = try await MosquittoClients.subscribe(
            port: chain.broker.port, filter: "beaconmesh/v1/coordinators/store-2/health", qos: 0)
        // Porto's first health report: it runs, its registry reachable through the relay.
        #expect(await health.waitForLine { $0.contains(#""database":{"state":"ok""#) } != nil, "\(chain.porto.transcript)")
        chain.relay.cut()
        // While Porto is cut off: Zoë visits Porto and Lisboa, Ana visits Porto, and head office forgets Zoë.
        try await chain.visit(store: 2, minor: 4)
        #expect(await chain.waitFor("arrived", store: 2), "greeted from memory: \(chain.porto.transcript)")
        try await chain.visit(store: 1, minor: 4)
        #expect(await chain.waitFor("arrived", store: 1))
        #expect(await chain.waitFor("left", store: 2))
        try await chain.visit(store: 2, minor: 1)
        #expect(await chain.waitFor("arrived", store: 2, count: 2))
        #expect(await chain.waitFor("left", store: 2, count: 2))
        _ = try await chain.members(["forget", "zoe"])
        // Porto's health says what is wrong, naming the host (its writes time out behind the cut). Health reports the
        // writer's own failure: its write can wait on the one connection for a poll's query to time out (10 s), then
        // time out itself (10 s), so this can take twice the registry timeout after the cut, and a CI machine is slow.
        let failing = await health.waitForLine(timeout: .seconds(40)) { $0.contains("\"state\":\"failing\"") }
        #expect(failing?.contains("127.0.0.1:\(chain.relay.port)") == true, "\(String(describing: failing))")
        chain.relay.restore()
        // Ana's visit in Porto is written once Porto is back; Zoë's is not: she stays forgotten.
        #expect(await eventually(timeout: .seconds(20)) { (try? chain.visits(of: "ana")) == 12 }, "\(chain.porto.transcript)")
        #expect(try await chain.base.writesSettled(of: "store-2"), "\(chain.porto.transcript)")
        #expect(try chain.visits(of: "ana") == 12)
        #expect(try chain.visits(of: "zoe") == nil)
        #expect(chain.porto.stderrLines.contains { $0.contains("127.0.0.1:\(chain.relay.port)") && $0.contains("cannot") })
        // Ana again in Lisboa: the greeting counts her Porto visit.
        try await chain.visit(store: 1, minor: 1)
        #expect(await chain.waitFor("arrived", store: 1, count: 2))
        let last = chain.events("arrived", store: 1).last
        #expect((last?["visit"] as? [String: Any])?["number"] as? Int == 13, "\(chain.events.lines)")
        #expect(chain.events("arrived", store: 2).count == 2 && chain.events("arrived", store: 1).count == 2, "nothing doubled")
        await health.stop()
        await chain.stop()
    }

    @Test("an idle coordinator cut off from the database: its health says failing within 10 s, naming the host, and ok once back")
    func idleCutOffShowsInHealth() async throws {
        let chain = try await Chain.start()
        let health = try await MosquittoClients.subscribe(
            port: chain.broker.port, filter: "beaconmesh/v1/coordinators/store-2/health", qos: 0)
        #expect(await health.waitForLine { $0.contains(#""database":{"state":"ok""#) } != nil, "\(chain.porto.transcript)")
        // Nothing is heard and nothing written: only the coordinator's own reads can notice.
        let cut = ContinuousClock.now
        chain.relay.cut()
        let failing = await health.waitForLine(timeout: .seconds(10)) { $0.contains("\"state\":\"failing\"") }
        #expect(failing != nil, "no failing health within 10 s of the cut: \(health.lines) \(chain.porto.transcript)")
        #expect(failing?.contains("127.0.0.1:\(chain.relay.port)") == true, "\(String(describing: failing))")
        #expect(ContinuousClock.now - cut < .seconds(10))
        let failingLines = health.lines.count
        chain.relay.restore()
        let back = await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            health.lines.dropFirst(failingLines).contains { $0.contains("\"database\":{\"state\":\"ok\"") }
        }
        #expect(back, "health says ok once the database is back: \(health.lines.suffix(3))")
        await health.stop()
        await chain.stop()
    }

    @Test(
        "a beacon given to another member is the new owner's in every coordinator within 5 s: the old owner is not greeted for it, also once the new owner is removed"
    )
    func beaconGivenToAnotherMember() async throws {
        let chain = try await Chain.start()
        try await Task.sleep(for: .seconds(1))
        // Ana's fob (minor 1) goes to Ben, a new member: only the beacon's row changes hands.
        _ = try await chain.members(["add", "ben", "--name", "Ben Okafor", "--beacon", "ibeacon:\(Mesh.uuid):1:1"])
        #expect(await chain.bothRead(changed: "ben"), "\(chain.lisboa.transcript)\n\(chain.porto.transcript)")
        try await chain.visit(store: 1, minor: 1)
        #expect(await chain.waitFor("arrived", store: 1), "\(chain.events.lines)")
        let greeted = chain.events("arrived", store: 1).compactMap { ($0["member"] as? [String: Any])?["id"] as? String }
        #expect(greeted == ["ben"], "store 1 greeted \(greeted)")
        // Ben leaves the club: the fob is nobody's now, in either store (not Ana's again).
        _ = try await chain.members(["remove", "ben"])
        #expect(await chain.bothRead(removed: "ben"), "\(chain.lisboa.transcript)\n\(chain.porto.transcript)")
        let mark = chain.events.lines.count
        try await chain.visit(store: 2, minor: 1)
        #expect(await chain.base.guestCameAndWent(store: 2, after: mark), "\(chain.events.lines.suffix(5))")
        #expect(chain.events("arrived", store: 2).isEmpty, "the fob is a guest's: \(chain.events("arrived", store: 2))")
        await chain.stop()
    }

    @Test("PostgreSQL restarted under traffic: no visit lost or doubled, no event doubled")
    func restartUnderTraffic() async throws {
        let chain = try await Chain.start()
        async let traffic: Void = {
            try await chain.visit(store: 1, minor: 1)
            try await Task.sleep(for: .seconds(3))
            try await chain.visit(store: 2, minor: 4)
        }()
        // PostgreSQL stops once Ana is greeted in Lisboa, mid-visit.
        #expect(await chain.waitFor("arrived", store: 1))
        try chain.server.halt(immediately: true)
        try await Task.sleep(for: .seconds(3))
        try chain.server.startServer()
        try await traffic
        #expect(await chain.waitFor("left", store: 2, timeout: .seconds(15)))
        #expect(
            await eventually(timeout: .seconds(20)) { (try? chain.visits(of: "ana")) == 12 && (try? chain.visits(of: "zoe")) == 1 },
            "ana \(String(describing: try? chain.visits(of: "ana"))), zoe \(String(describing: try? chain.visits(of: "zoe")))\n\(chain.lisboa.transcript)\n\(chain.porto.transcript)"
        )
        #expect(try await chain.base.writesSettled(of: "store-1"))
        #expect(try await chain.base.writesSettled(of: "store-2"))
        #expect(try chain.visits(of: "ana") == 12 && chain.visits(of: "zoe") == 1)
        #expect(chain.events("arrived", store: 1).count == 1 && chain.events("arrived", store: 2).count == 1)
        await chain.stop()
    }
}
