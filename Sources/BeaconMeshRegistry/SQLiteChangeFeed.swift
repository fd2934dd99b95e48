import Foundation
import Synchronization

/// Changes to a SQLite registry made by other connections (the `members` command): SQLite notifies no one, so each
/// `next(timeout:)` waits `timeout` and then compares the file's data version with the last one seen.
final class SQLiteChangeFeed: RegistryChangeFeed {
    private let registry: SQLiteRegistry
    private let version: Mutex<Int64>
    private let closed = Mutex(false)
    private let wakeUp = NSCondition()

    init(registry: SQLiteRegistry, version: Int64) {
        self.registry = registry
        self.version = Mutex(version)
    }

    func next(timeout: Duration) throws -> RegistryChange {
        wakeUp.lock()
        if !closed.withLock({ $0 }) {
            _ = wakeUp.wait(until: Date(timeIntervalSinceNow: Double(timeout.wholeMilliseconds) / 1000))
        }
        wakeUp.unlock()
        if closed.withLock({ $0 }) { return .nothing }
        let current = try registry.dataVersion()
        return version.withLock { version in
            defer { version = current }
            return current == version ? .nothing : .everything
        }
    }

    func close() {
        closed.withLock { $0 = true }
        wakeUp.lock()
        wakeUp.broadcast()
        wakeUp.unlock()
    }
}
