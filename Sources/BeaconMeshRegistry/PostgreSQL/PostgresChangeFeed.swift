import BeaconMeshCore
import BeaconMeshThreads
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Member changes announced by PostgreSQL (`LISTEN beaconmesh_registry`; triggers log every change to a member, their
/// fields or beacons, whoever made it, in `member_change` and `NOTIFY` its place there), on a connection of the feed's
/// own. The members are read from the log (a notification names no member: its payload stays in PostgreSQL's queue
/// files, beyond any erasure); a change no longer in the log (the log moved on, or its member was forgotten) makes
/// the feed say `.everything`.
///
/// A thread of the feed's own keeps the listening connection (not the concurrency pool, whose few threads may all be
/// busy): it checks the connection with a query every few seconds (a cut network drops packets without a word) and
/// connects again after a loss. Announcements made while it was not listening are lost, so each time it (re)starts
/// listening the feed says `.everything`. Announcements caused by the registry's own connection (this coordinator's
/// own counts) are left out. While it cannot listen, `next` waits, then throws why.
final class PostgresChangeFeed: RegistryChangeFeed {
    private struct State {
        /// The log rows of the changes announced and not yet read.
        var changes: Set<Int64> = []
        var everything = false
        var failure: RegistryFailure?
        var closed = false
    }

    /// Announcements coalesced for this long after the first (an import announces thousands at once).
    static let coalescing: Duration = .milliseconds(50)
    /// More members than this changed at once: read everything instead.
    static let manyMembers = 2000
    /// The listening connection is checked this often, and must answer within as long.
    static let keepAlive: Duration = .seconds(3)

    private let state = Mutex(State())
    private let wakeUp = NSCondition()
    private let session: PostgresSession

    init(session: PostgresSession, ownPID: @escaping @Sendable () -> Int32, logger: Logger) throws(DedicatedThread.StartError) {
        self.session = session
        // Not joined: the thread ends once the feed is closed.
        _ = try DedicatedThread(name: "registry-listen") { [self] in listen(session: session, ownPID: ownPID, logger: logger) }
    }

    private func listen(session: PostgresSession, ownPID: @escaping @Sendable () -> Int32, logger: Logger) {
        while !isClosed {
            var connection: PostgresConnection?
            do {
                let listening = try session.connect()
                connection = listening
                let context = listening.addListener(channel: PostgresSchema.channel) { [weak self] _, notification in
                    let parts = notification.payload.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, Int32(parts[0]) != ownPID(), let change = Int64(parts[1]) else { return }
                    self?.update { _ = $0.changes.insert(change) }
                }
                let statements = PostgresSession.Statements(connection: listening, logger: logger, timeout: Self.keepAlive)
                // Answered after the LISTEN before it: from here on, nothing is missed.
                try statements.query("SELECT 1")
                update {
                    $0.everything = true
                    $0.failure = nil
                }
                while !isClosed {
                    pause(Self.keepAlive)
                    try statements.query("SELECT 1")
                }
                context.stop()
            } catch {
                if isClosed { break }
                let cause = RegistryFailure(
                    .unavailable, "cannot listen to \(session.settings.displayURL): \(PostgresRegistry.describe(error))")
                update { $0.failure = cause }
                pause(.seconds(1))
            }
            connection?.closeAndForget()
        }
    }

    /// Waits `duration`, or until closed.
    private func pause(_ duration: Duration) {
        wakeUp.lock()
        if !isClosed { _ = wakeUp.wait(until: Date(timeIntervalSinceNow: Double(duration.wholeMilliseconds) / 1000)) }
        wakeUp.unlock()
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    private func update(_ change: (inout State) -> Void) {
        state.withLock { change(&$0) }
        wakeUp.lock()
        wakeUp.broadcast()
        wakeUp.unlock()
    }

    func next(timeout: Duration) throws -> RegistryChange {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.wholeMilliseconds) / 1000)
        func ready(_ state: State) -> Bool { state.closed || state.everything || !state.changes.isEmpty }
        wakeUp.lock()
        while !state.withLock({ ready($0) }) {
            if !wakeUp.wait(until: deadline) { break }
        }
        wakeUp.unlock()
        if state.withLock({ !$0.changes.isEmpty && !$0.everything }) {
            Thread.sleep(forTimeInterval: Double(Self.coalescing.wholeMilliseconds) / 1000)
        }
        let (changes, seen) = try state.withLock { state throws(RegistryFailure) -> (Set<Int64>, RegistryChange?) in
            if state.closed { return ([], .nothing) }
            defer {
                state.changes = []
                state.everything = false
            }
            if state.everything || state.changes.count > Self.manyMembers { return ([], .everything) }
            if !state.changes.isEmpty { return (state.changes, nil) }
            if let failure = state.failure { throw failure }
            return ([], .nothing)
        }
        if let seen { return seen }
        do {
            return try members(changedBy: changes).map { .members($0) } ?? .everything
        } catch {
            update { $0.changes.formUnion(changes) }  // read again next time
            throw RegistryFailure(.unavailable, "cannot read the member changes: \(PostgresRegistry.describe(error))")
        }
    }

    /// The members the logged `changes` name; `nil` when one is no longer logged or names no one (a member was
    /// forgotten): then anything may have changed.
    private func members(changedBy changes: Set<Int64>) throws -> Set<String>? {
        let logged = try session.run { statements in
            try statements.query("SELECT member FROM member_change WHERE seq = ANY(\(Array(changes)))").map { try $0.decode(String.self) }
        }
        guard logged.count == changes.count, !logged.contains(RegistryChange.everyoneLogged) else { return nil }
        return Set(logged)
    }

    func close() {
        update { $0.closed = true }
    }

    /// The connection that read the log is closed with the feed (the listening one, by its thread).
    deinit { session.close() }
}
