import Foundation
import Synchronization

/// A real PostgreSQL server (Debian's `postgresql`) for tests: its own cluster in a temporary folder, on a free
/// loopback port, trusting loopback logins; stopped and its folder removed by `stop()` (or when the process exits,
/// for `shared`).
///
/// PostgreSQL refuses to run as root, so under root `initdb` and `pg_ctl` run as the `postgres` user (`runuser`),
/// in a folder that user owns. A missing PostgreSQL is an error saying what to install, never a skip.
///
/// ```swift
/// let server = try PostgresServer.start()
/// let url = try server.createDatabase()     // postgres://postgres@127.0.0.1:PORT/test_…
/// server.stop()
/// ```
public final class PostgresServer: Sendable {
    /// The loopback port the server listens on; the same across `restart()`.
    public let port: Int
    /// The temporary folder holding the cluster (`data/`), its log and its socket.
    public let directory: String
    /// The superuser tests log in as (no password: loopback logins are trusted).
    public let user = "postgres"

    private static let binaries = "/usr/lib/postgresql/15/bin"
    private let running = Mutex(false)

    /// Makes a cluster on a free port and starts it.
    public static func start() throws -> PostgresServer {
        let server = try PostgresServer()
        try server.startServer()
        return server
    }

    /// One server for the whole test process, started at first use and stopped when the process exits.
    public static func shared() throws -> PostgresServer {
        try sharedServer.withLock { shared in
            if let shared { return shared }
            let server = try PostgresServer.start()
            atexit { PostgresServer.stopShared() }
            shared = server
            return server
        }
    }

    private static let sharedServer = Mutex<PostgresServer?>(nil)

    private static func stopShared() {
        sharedServer.withLock { $0?.stop() }
    }

    private init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binaries + "/initdb") else {
            throw TestSupportError(
                "PostgreSQL 15 is not installed (\(Self.binaries)/initdb): apt-get install postgresql (deploy/install-deps.sh)")
        }
        port = try FreePort.next()
        directory = "/tmp/beaconmesh-postgres-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if geteuid() == 0 { try Self.run("/usr/bin/chown", ["postgres:postgres", directory]) }
        try asServerUser(
            Self.binaries + "/initdb",
            ["-D", directory + "/data", "-U", user, "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
        let settings = [
            "listen_addresses = '127.0.0.1'", "port = \(port)", "unix_socket_directories = '\(directory)'",
            // Never fsync (a test outlives no power cut), but a commit is acknowledged only once its WAL is written
            // to the OS: tests kill the server (`halt(immediately:)`), and a write it acknowledged must survive that,
            // as on a production server. (`synchronous_commit = off` lost the last 600 ms of commits there.)
            "fsync = off", "synchronous_commit = on", "full_page_writes = off", "max_connections = 200",
            // Old write-ahead log files are deleted, not renamed for reuse with their contents (`members purge`).
            "wal_recycle = off",
        ]
        let conf = directory + "/data/postgresql.conf"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: conf))
        handle.seekToEndOfFile()
        handle.write(Data(("\n" + settings.joined(separator: "\n") + "\n").utf8))
        try handle.close()
    }

    /// The URL of database `name` for the test user.
    public func url(database: String) -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)" }

    /// Creates a new empty database and returns its URL.
    public func createDatabase() throws -> String {
        let name = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try psql("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// Runs SQL with `psql` as the superuser (in database `postgres` unless said); returns what it printed.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try Self.run(
            Self.binaries + "/psql",
            ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
    }

    /// What `pg_dump --data-only` prints for `database`: every row of every table.
    public func dumpData(database: String) throws -> String {
        try Self.run(Self.binaries + "/pg_dump", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "--data-only", database])
    }

    /// Starts the server (after `stop(keepingData: true)`), waiting until it accepts connections.
    public func startServer() throws {
        try asServerUser(
            Self.binaries + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "30", "start"])
        running.withLock { $0 = true }
    }

    /// Stops the server at once (`-m immediate`: like a crash or a pulled cable) or cleanly, keeping its data.
    public func halt(immediately: Bool = false) throws {
        try asServerUser(
            Self.binaries + "/pg_ctl", ["-D", directory + "/data", "-m", immediately ? "immediate" : "fast", "-w", "stop"])
        running.withLock { $0 = false }
    }

    /// Stops the server if it runs and removes its folder.
    public func stop() {
        if running.withLock({ $0 }) { try? halt() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func asServerUser(_ program: String, _ arguments: [String]) throws {
        if geteuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
        } else {
            try Self.run(program, arguments)
        }
    }

    /// Runs a program to its end; throws with its output if it fails.
    ///
    /// Spawned and reaped here (`posix_spawn`, `waitpid`): Foundation's `Process.waitUntilExit` was seen to wait
    /// for ever on a `runuser` that had exited, when `pg_ctl` left the server running behind it.
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let output = "/tmp/beaconmesh-postgres-run-\(UUID().uuidString)"
        defer { unlink(output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestSupportError("cannot run \(program): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw TestSupportError("\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }
}
