import BeaconMeshThreads
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Member changes announced by PostgreSQL (`LISTEN beaconmesh_registry`; triggers `NOTIFY` every change to a member,
/// their fields or beacons, whoever made it), on a connection of the feed's own.
///
/// A thread of the feed's own keeps the listening connection (not the concurrency pool, whose few threads may all be
/// busy): it checks the connection with a query every few seconds (a cut network drops packets without a word) and
/// connects again after a loss. Announcements made while it was not listening are lost, so each time it (re)starts
/// listening the feed says `.everything`. Announcements caused by the registry's own connection (this coordinator's
/// own counts) are left out. While it cannot listen, `next` waits, then throws why.
final class PostgresChangeFeed: RegistryChangeFeed {
    private struct State {
        var members: Set<String> = []
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

    init(session: PostgresSession, ownPID: @escaping @Sendable () -> Int32, logger: Logger) throws(DedicatedThread.StartError) {
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
                    guard parts.count == 2, Int32(parts[0]) != ownPID() else { return }
                    let member = String(parts[1])
                    self?.update { _ = $0.members.insert(member) }
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
        func ready(_ state: State) -> Bool { state.closed || state.everything || !state.members.isEmpty }
        wakeUp.lock()
        while !state.withLock({ ready($0) }) {
            if !wakeUp.wait(until: deadline) { break }
        }
        wakeUp.unlock()
        if state.withLock({ !$0.members.isEmpty && !$0.everything }) {
            Thread.sleep(forTimeInterval: Double(Self.coalescing.wholeMilliseconds) / 1000)
        }
        return try state.withLock { state throws(RegistryFailure) -> RegistryChange in
            if state.closed { return .nothing }
            defer {
                state.members = []
                state.everything = false
            }
            if state.everything || state.members.count > Self.manyMembers { return .everything }
            if !state.members.isEmpty { return .members(state.members) }
            if let failure = state.failure { throw failure }
            return .nothing
        }
    }

    func close() {
        update { $0.closed = true }
    }
}
