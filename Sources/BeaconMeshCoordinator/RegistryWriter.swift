import BeaconMeshCore
import Foundation
import GRDB
import Logging
import Synchronization

/// Owns the coordinator's writes to the registry database, off the path from a sighting to an event: changes are
/// queued (never blocking the caller) and written in order on the writer's own thread, retried with backoff until
/// the database takes them, so a locked, read-only or full database delays writes but loses none and stalls nothing.
///
/// The first failure of a kind is logged once, with the file and the cause; the recovery is logged with what was
/// written. `status` tells health what is wrong and how much waits.
public final class RegistryWriter: Sendable {
    /// The writer's state, for health.
    public struct Status: Sendable, Equatable {
        /// Rows waiting to be written.
        public var queued: Int
        /// What is wrong while the database refuses writes, and since when.
        public var failure: String?
        public var failingSince: Timestamp?
    }

    private struct State {
        var waiting = RegistryChanges()
        var writing = 0
        var failure: String?
        var failingSince: Timestamp?
        var stopping = false
        var stopped = false
    }

    private let registry: MemberRegistry
    private let logger: Logger
    private let state = Mutex(State())
    private let wakeUp = NSCondition()
    private let retryDelays: (first: Duration, longest: Duration)
    private let clock: @Sendable () -> Timestamp

    /// A writer for `registry`; a failed write is retried after `firstRetry`, doubling up to `longestRetry`.
    public init(
        registry: MemberRegistry, logger: Logger, firstRetry: Duration = .milliseconds(250),
        longestRetry: Duration = .seconds(5), clock: @escaping @Sendable () -> Timestamp
    ) {
        self.registry = registry
        self.logger = logger
        self.retryDelays = (firstRetry, longestRetry)
        self.clock = clock
        let thread = Thread { [self] in self.run() }
        thread.name = "registry-writer"
        thread.start()
    }

    /// Queues `changes` to be written after everything queued before; returns at once.
    public func enqueue(_ changes: RegistryChanges) {
        guard !changes.isEmpty else { return }
        state.withLock { $0.waiting.merge(changes) }
        signal()
    }

    private func signal() {
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
    }

    /// What waits, and what is wrong.
    public var status: Status {
        state.withLock { Status(queued: $0.waiting.count + $0.writing, failure: $0.failure, failingSince: $0.failingSince) }
    }

    /// Writes what is queued and stops the thread; gives up after `timeout` while the database still refuses
    /// (saying how much is lost). Returns whether everything was written.
    @discardableResult
    public func close(timeout: Duration) async -> Bool {
        state.withLock { $0.stopping = true }
        signal()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.stopped }) { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let left = state.withLock { state -> Int in
            state.stopped = true
            return state.waiting.count + state.writing
        }
        if left > 0 {
            logger.error(
                "stopped with registry writes not saved",
                metadata: [
                    "database": "\(registry.path)", "rows": "\(left)",
                    "cause": "\(status.failure ?? "the database did not answer in time")",
                ])
        }
        return left == 0
    }

    private func run() {
        var delay = retryDelays.first
        while true {
            wakeUp.lock()
            while state.withLock({ $0.waiting.isEmpty && !$0.stopping }) { wakeUp.wait() }
            wakeUp.unlock()
            let (changes, stop) = state.withLock { state -> (RegistryChanges, Bool) in
                let changes = state.waiting
                state.waiting = RegistryChanges()
                state.writing = changes.count
                return (changes, state.stopped)
            }
            if stop { return }
            if changes.isEmpty {
                state.withLock { $0.stopped = true }
                return
            }
            do {
                try registry.apply(changes)
                delay = retryDelays.first
                let recovered = state.withLock { state -> (String, Timestamp)? in
                    state.writing = 0
                    defer {
                        state.failure = nil
                        state.failingSince = nil
                    }
                    return state.failure.map { ($0, state.failingSince ?? clock()) }
                }
                if let (failure, since) = recovered {
                    logger.notice(
                        "registry database writable again; waiting writes saved",
                        metadata: [
                            "database": "\(registry.path)", "rows": "\(changes.count)",
                            "failedFor": "\((clock() - since).wholeMilliseconds / 1000) s",
                            "cause": "\(failure)",
                        ])
                }
            } catch {
                let cause = RegistryWriter.describe(error)
                let isNew = state.withLock { state -> Bool in
                    // Put the changes back before anything that came after them.
                    var merged = changes
                    merged.merge(state.waiting)
                    state.waiting = merged
                    state.writing = 0
                    defer { state.failure = cause }
                    if state.failingSince == nil { state.failingSince = clock() }
                    return state.failure != cause
                }
                if isNew {
                    logger.error(
                        "cannot write to the registry database; presence goes on, writes wait and are retried",
                        metadata: [
                            "database": "\(registry.path)", "cause": "\(cause)", "waiting": "\(changes.count)",
                        ])
                }
                if state.withLock({ $0.stopped }) { return }
                sleep(for: delay)
                delay = min(delay * 2, retryDelays.longest)
            }
        }
    }

    /// Sleeps on the condition, so that `close` need not wait a whole delay to be noticed.
    private func sleep(for delay: Duration) {
        wakeUp.lock()
        _ = wakeUp.wait(until: Date(timeIntervalSinceNow: Double(delay.wholeMilliseconds) / 1000))
        wakeUp.unlock()
    }

    /// The cause of a failed write in an IT person's words.
    static func describe(_ error: Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "the database is locked by another program (SQLITE_BUSY)"
        case .SQLITE_READONLY:
            return "the database is read-only (SQLITE_READONLY): check the file's and its folder's permissions and the file system"
        case .SQLITE_FULL:
            return "the disk or the database is full (SQLITE_FULL): free space on its file system"
        case .SQLITE_IOERR:
            return
                "the database file cannot be written (SQLITE_IOERR, \(error.message ?? "disk I/O error")): check the disk, and the file's permissions and attributes"
        default:
            return "\(error.message ?? "\(error)") (\(error.resultCode))"
        }
    }
}
