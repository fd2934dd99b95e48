import BeaconMeshCore
import Foundation
import Synchronization

/// Changes to a SQLite registry made by other connections (the `members` command): SQLite notifies no one, so
/// `next(timeout:)` looks every `lookEvery` until `timeout`: if the file's data version says another connection
/// committed, it reads the member change log (`member_change`, filled by triggers) past the last change seen and
/// names those members.
///
/// Commits that changed no member (visit history, check-in requests) read nothing more; the coordinator's own
/// changes are passed over unless another connection committed in between (then they are read again, which is
/// harmless). Too many changes at once, or a log that dropped some unseen: `.everything`.
final class SQLiteChangeFeed: RegistryChangeFeed {
    /// How many of the latest member changes the log keeps (the triggers drop older ones).
    static let logLength = 10_000
    /// More members than this changed at once: read everything instead.
    static let manyMembers = 2000
    /// How often a waiting `next` looks (two cheap reads), so that a steady stream of changes (other stores counting
    /// thousands of visits a second) arrives in small sets, not as thousands at the end of the wait.
    static let lookEvery: Duration = .milliseconds(200)

    private struct Position {
        /// The file's data version at the last look.
        var version: Int64
        /// The last change of the log looked at.
        var seen: Int64
    }

    private let registry: SQLiteRegistry
    private let position: Mutex<Position>
    private let closed = Mutex(false)
    private let wakeUp = NSCondition()

    init(registry: SQLiteRegistry, version: Int64, seen: Int64) {
        self.registry = registry
        position = Mutex(Position(version: version, seen: seen))
    }

    func next(timeout: Duration) throws -> RegistryChange {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.wholeMilliseconds) / 1000)
        while true {
            wakeUp.lock()
            if !closed.withLock({ $0 }) {
                _ = wakeUp.wait(until: min(deadline, Date(timeIntervalSinceNow: Double(Self.lookEvery.wholeMilliseconds) / 1000)))
            }
            wakeUp.unlock()
            if closed.withLock({ $0 }) { return .nothing }
            let change = try look()
            if change != .nothing || Date() >= deadline { return change }
        }
    }

    /// One look at the data version and the log, moving the position past what it read.
    private func look() throws -> RegistryChange {
        let before = position.withLock { $0 }
        let (version, last, members) = try registry.loggedChanges(
            after: before.seen, version: before.version, limit: Self.manyMembers)
        position.withLock { $0 = Position(version: version, seen: last) }
        guard let members else { return .everything }
        return members.isEmpty ? .nothing : .members(members)
    }

    func close() {
        closed.withLock { $0 = true }
        wakeUp.lock()
        wakeUp.broadcast()
        wakeUp.unlock()
    }
}
