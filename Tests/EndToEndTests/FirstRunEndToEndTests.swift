import BeaconMeshTesting
import Foundation
import Testing

/// The first run on a new machine (issue 37): a coordinator, the dashboard and `members list` opening one database at
/// the same moment, new or made by an older version, all open it (the migrations run once, by whoever comes first);
/// a database upgraded by a newer BeaconMesh is refused in one line.
@Suite("programs opening one database at once", .serialized)
struct FirstRunEndToEndTests {
    @Test("20 rounds of a coordinator, a dashboard and two members lists started together, on a new file and on an old one")
    func startedTogether() async throws {
        let broker = try await MosquittoBroker.start()
        for round in 1...20 {
            let directory = try Mesh.temporaryDirectory()
            let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: broker.url)
            let database = directory + "/mesh.sqlite"
            // Odd rounds: a new file. Even rounds: a file of an older version, its last two migrations not run.
            if round % 2 == 0 { try await Self.makeOldDatabase(at: database) }
            try await Self.openTogether(database: database, config: config, broker: broker, round: round)
        }
        await broker.stop()
    }

    @Test("a database a newer BeaconMesh upgraded is refused in one line by the coordinator, the dashboard and members list")
    func newerSchemaRefused() async throws {
        let directory = try Mesh.temporaryDirectory()
        let database = directory + "/mesh.sqlite"
        let list = try Mesh.program("beacon-coordinator", ["members", "list", "--db", database])
        #expect(await list.waitForExit(timeout: .seconds(20)) == .exited(0), "\(list.transcript)")
        _ = try await Mesh.sqlite(database, "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
        let before = try await Mesh.sqlite(database, "SELECT group_concat(identifier, '|') FROM grdb_migrations")
        for arguments in [
            ["beacon-coordinator", "members", "list", "--db", database],
            ["beacon-dashboard", "--broker", "mqtt://127.0.0.1:1", "--listen", "127.0.0.1:\(try FreePort.next())", "--db", database],
        ] {
            let program = try Mesh.program(arguments[0], Array(arguments.dropFirst()))
            let status = await program.waitForExit(timeout: .seconds(20))
            #expect(status != nil && status != .exited(0), "\(arguments[0]): \(program.transcript)")
            let lines = (program.stderrLines + program.stdoutLines).filter { $0.contains("newer BeaconMesh") }
            #expect(lines.count == 1, "\(arguments[0]) says why in one line: \(program.transcript)")
            #expect(lines.first?.contains("v99: from the future") == true, "\(program.transcript)")
        }
        #expect(try await Mesh.sqlite(database, "SELECT group_concat(identifier, '|') FROM grdb_migrations") == before, "nothing migrated")
    }

    /// Starts the four programs at once on `database` and checks that each opened it.
    private static func openTogether(database: String, config: String, broker: MosquittoBroker, round: Int) async throws {
        let port = try FreePort.next()
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        let dashboard = try Mesh.program(
            "beacon-dashboard", ["--broker", broker.url, "--listen", "127.0.0.1:\(port)", "--db", database, "--store", "1"])
        let lists = try (0..<2).map { _ in try Mesh.program("beacon-coordinator", ["members", "list", "--db", database]) }
        for list in lists {
            #expect(await list.waitForExit(timeout: .seconds(30)) == .exited(0), "round \(round), members list: \(list.transcript)")
        }
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(30)) { $0.contains("coordinator running") }
        #expect(running != nil, "round \(round), coordinator: \(coordinator.transcript)")
        let serving = await dashboard.waitForLine(in: .stdout, timeout: .seconds(30)) { $0.contains("serving http") }
        #expect(serving != nil, "round \(round), dashboard: \(dashboard.transcript)")
        _ = await dashboard.stop(with: SIGTERM, timeout: .seconds(10))
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        let migrations = try await Mesh.sqlite(database, "SELECT COUNT(*) FROM grdb_migrations WHERE identifier LIKE 'v%'")
        #expect(Int(migrations) ?? 0 >= 8, "round \(round): every migration ran once (\(migrations))")
    }

    /// A registry as an older BeaconMesh left it: made by this one, then its last two migrations (the chain's
    /// indexes, the survey's tables) taken back.
    private static func makeOldDatabase(at database: String) async throws {
        let list = try Mesh.program("beacon-coordinator", ["members", "list", "--db", database])
        guard await list.waitForExit(timeout: .seconds(30)) == .exited(0) else { throw TestSupportError(list.transcript) }
        _ = try await Mesh.sqlite(
            database,
            """
            DROP TABLE survey_sample; DROP TABLE survey_fit; DROP TABLE survey_version;
            DROP INDEX visit_history_store_member; DROP INDEX guest_count_store_hour;
            DELETE FROM grdb_migrations WHERE identifier LIKE 'v7:%' OR identifier LIKE 'v8:%';
            """)
    }
}
