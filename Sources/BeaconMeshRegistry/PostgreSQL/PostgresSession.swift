import BeaconMeshCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// One PostgreSQL connection used from blocking threads, one transaction at a time: `transaction` and `run` wait for
/// their queries (each at most `timeout`, after which the connection is closed), and the next call after a lost or
/// timed-out connection connects again. A server's refusal (a constraint, a permission) keeps the connection.
///
/// Blocking is what the registry's callers want (the writer's thread, the change feed's queue, a command line); the
/// waiting happens on their threads while postgres-nio's event loop does the talking.
/// `@unchecked Sendable`: `current` is only touched while `turn` is held.
final class PostgresSession: @unchecked Sendable {
    let settings: PostgresSettings
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let timeout: Duration
    /// How long connecting may take, handshake included.
    private let connectTimeout: Duration
    /// Held for a whole transaction: two threads never interleave statements on the connection.
    private let turn = NSLock()
    private var current: PostgresConnection?
    /// Runs once on the first connection made, before anything else is asked on it (the registry's migrations);
    /// until it has succeeded, every new connection runs it.
    private let prepare: (@Sendable (Statements) throws -> Void)?
    private var prepared = false
    /// The server process serving the current connection (notifications it caused name it).
    let backendPID = Atomic<Int32>(0)
    private let connections = Atomic<Int>(0)

    /// Each statement may take `timeout`; connecting, `connectTimeout` (by default as long). `prepare` runs on the
    /// first connection that is made (none is made here).
    init(
        settings: PostgresSettings, password: String?, logger: Logger, timeout: Duration = .seconds(10), connectTimeout: Duration? = nil,
        prepare: (@Sendable (Statements) throws -> Void)? = nil
    ) throws(RegistryFailure) {
        self.prepare = prepare
        self.settings = settings
        self.configuration = try settings.configuration(password: password, timeout: connectTimeout ?? timeout)
        self.logger = logger
        self.timeout = timeout
        self.connectTimeout = connectTimeout ?? timeout
    }

    /// Runs `body` inside `BEGIN … COMMIT` (rolled back if it throws). Failures are `RegistryFailure`s in an IT
    /// person's words (postgres-nio's own errors describe themselves as "Generic description").
    func transaction<T>(_ body: (Statements) throws -> T) throws -> T {
        try explained {
            try withConnection { statements in
                try statements.execute("BEGIN")
                do {
                    let value = try body(statements)
                    try statements.execute("COMMIT")
                    return value
                } catch {
                    _ = try? statements.execute("ROLLBACK")
                    throw error
                }
            }
        }
    }

    /// Runs `body` on the connection, outside a transaction (each statement commits on its own).
    func run<T>(_ body: (Statements) throws -> T) throws -> T {
        try explained { try withConnection(body) }
    }

    private func explained<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as RegistryFailure {
            throw failure
        } catch {
            throw RegistryFailure(.unavailable, PostgresRegistry.describe(error))
        }
    }

    private func withConnection<T>(_ body: (Statements) throws -> T) throws -> T {
        turn.lock()
        defer { turn.unlock() }
        do {
            let connection: PostgresConnection
            if let open = current, !open.isClosed {
                connection = open
            } else {
                connection = try connect()
                if !prepared, let prepare {
                    do {
                        try prepare(Statements(connection: connection, logger: logger, timeout: timeout))
                    } catch {
                        connection.closeAndForget()
                        throw error
                    }
                }
                prepared = true
                current = connection
            }
            do {
                return try body(Statements(connection: connection, logger: logger, timeout: timeout))
            } catch let error as PSQLError where error.code == .server {
                throw error
            } catch {
                // Lost, timed out or confused: start afresh next time.
                connection.closeAndForget()
                current = nil
                throw error
            }
        }
    }

    /// A new connection (the last one is gone).
    func connect() throws -> PostgresConnection {
        let id = connections.wrappingAdd(1, ordering: .relaxed).newValue
        // postgres-nio's own connect timeout covers the TCP connection, not the handshake after it: a server killed
        // or restarting at that moment could leave the wait without an end.
        let connection = try Self.wait(
            for: PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: id, logger: logger),
            atMost: connectTimeout, whatTimedOut: "connecting", late: { $0.closeAndForget() })
        let statements = Statements(connection: connection, logger: logger, timeout: timeout)
        if let pid = try statements.query("SELECT pg_backend_pid()").first?.decode(Int32.self) {
            backendPID.store(pid, ordering: .relaxed)
        }
        return connection
    }

    /// Waits for `future` at most `timeout`: past it the wait fails as unavailable and `timedOut` runs; `late` gets what
    /// the future still brings after that (a connection to close).
    static func wait<Value: Sendable>(
        for future: EventLoopFuture<Value>, atMost timeout: Duration, whatTimedOut: String,
        timedOut: @escaping @Sendable () -> Void = {}, late: @escaping @Sendable (Value) -> Void = { _ in }
    ) throws -> Value {
        let loop = future.eventLoop
        let answer = loop.makePromise(of: Value.self)
        let settled = FirstOfTwo()
        let deadline = loop.scheduleTask(in: .milliseconds(Int64(timeout.wholeMilliseconds))) {
            guard settled.claim() else { return }
            answer.fail(RegistryFailure(.unavailable, "no answer to \(whatTimedOut) within \(timeout.wholeMilliseconds / 1000) s"))
            timedOut()
        }
        future.whenComplete { result in
            guard settled.claim() else {
                if case .success(let value) = result { late(value) }
                return
            }
            deadline.cancel()
            answer.completeWith(result)
        }
        return try answer.futureResult.wait()
    }

    /// Closes the connection.
    func close() {
        turn.lock()
        defer { turn.unlock() }
        current?.closeAndForget()
        current = nil
    }

    /// Statements on one connection, each waited for at most `timeout`.
    struct Statements {
        let connection: PostgresConnection
        let logger: Logger
        let timeout: Duration

        /// The rows of `query`.
        @discardableResult
        func query(_ query: PostgresQuery) throws -> [PostgresRow] {
            try result(query).rows
        }

        /// Runs `query`; returns how many rows it changed.
        @discardableResult
        func execute(_ query: PostgresQuery) throws -> Int {
            try result(query).metadata.rows ?? 0
        }

        private func result(_ query: PostgresQuery) throws -> PostgresQueryResult {
            let connection = self.connection
            // No answer in time (a cut network drops packets without a word): the wait ends, and the connection is
            // given up. The wait ends by itself: closing the connection did not always fail the query (a writer waited
            // forever after PostgreSQL was stopped mid-transaction, holding the session, seen with gdb).
            return try PostgresSession.wait(
                for: connection.query(query, logger: logger), atMost: timeout, whatTimedOut: "a statement",
                timedOut: { connection.closeAndForget() })
        }
    }
}

extension PostgresConnection {
    /// Closes the connection without waiting for it to be closed (it is kept alive until it is: postgres-nio
    /// insists that a connection is closed before it goes away).
    func closeAndForget() {
        let closing: EventLoopFuture<Void> = close()
        closing.whenComplete { _ in withExtendedLifetime(self) {} }
    }
}

/// Optional values as two arrays PostgreSQL can take (postgres-nio binds no array with `nil`s in it): the values,
/// a placeholder where there is none, and which are present. `CASE WHEN present THEN value END` puts them together.
struct NullableColumn<Value: PostgresArrayEncodable & PostgresArrayDecodable> {
    let values: [Value]
    let present: [Bool]

    init(_ optionals: [Value?], placeholder: Value) {
        values = optionals.map { $0 ?? placeholder }
        present = optionals.map { $0 != nil }
    }
}

/// Which of two racing callbacks (an answer, a deadline) came first: the first `claim()` returns true, later ones false.
private final class FirstOfTwo: Sendable {
    private let taken = Atomic<Bool>(false)

    func claim() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
}
