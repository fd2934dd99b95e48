import BeaconMeshCore
import BeaconMeshThreads
import Foundation
import Logging
import Synchronization

/// Owns the coordinator's writes to the registry database, off the path from a sighting to an event: changes are
/// queued (never blocking the caller) and written in order on the writer's own thread, retried with backoff until
/// the database takes them, so a locked, read-only or full database delays writes but loses none and stalls nothing.
///
/// Changes are written in batches, each at most once and in order: a batch that failed is tried again, with the same
/// batch id, before anything queued after it (which meanwhile coalesces), so a commit whose answer was lost (the
/// database went away at that moment) is not counted twice. Counts are increments, so a coordinator that was cut off
/// from a shared registry adds its visits to those the other stores counted meanwhile.
///
/// The first failure of a kind is logged once, with the file or host and the cause; the recovery is logged with what
/// was written. `status` tells health what is wrong and how much waits.
public final class RegistryWriter: Sendable {
    /// The writer's state, for health.
    public struct Status: Sendable, Equatable {
        /// Rows waiting to be written.
        public var queued: Int
        /// What is wrong while the database refuses writes, and since when.
        public var failure: String?
        public var failingSince: Timestamp?
        /// Survey samples given up since the start because more than `RegistryChanges.surveySampleLimit` waited.
        public var surveySamplesDropped = 0

        public init(queued: Int, failure: String? = nil, failingSince: Timestamp? = nil, surveySamplesDropped: Int = 0) {
            self.queued = queued
            self.failure = failure
            self.failingSince = failingSince
            self.surveySamplesDropped = surveySamplesDropped
        }
    }

    /// What to do once a batch is written (publish what must not go out before the database has it).
    public typealias AfterWrite = @Sendable () -> Void

    private struct State {
        var waiting = RegistryChanges()
        var waitingAfterWrite: [AfterWrite] = []
        var surveySamplesDropped = 0
        /// The batch being written or waiting to be tried again, with its id and what follows its writing.
        var failed: (changes: RegistryChanges, id: String, afterWrite: [AfterWrite])?
        /// Batches given their id before their turn (`pendingBatches`, a replay): written in order, before `waiting`.
        var sealed: [(changes: RegistryChanges, id: String, afterWrite: [AfterWrite])] = []
        var sealings = 0
        var failure: String?
        var failingSince: Timestamp?
        var stopping = false
        var stopped = false
    }

    private let registry: any RegistryWriting
    private let stores: Set<UInt16>?
    /// Batch ids are `{writerID}-{n}`: new at every start, so no two batches share one.
    private let writerID = UUID().uuidString
    private let logger: Logger
    private let state = Mutex(State())
    private let wakeUp = NSCondition()
    private let retryDelays: (first: Duration, longest: Duration)
    private let clock: @Sendable () -> Timestamp

    /// A writer for `registry`, whose ended visits are those of `stores` (all if `nil`); a failed write is retried
    /// after `firstRetry`, doubling up to `longestRetry`.
    public init(
        registry: any RegistryWriting, stores: Set<UInt16>? = nil, logger: Logger, firstRetry: Duration = .milliseconds(250),
        longestRetry: Duration = .seconds(5), clock: @escaping @Sendable () -> Timestamp
    ) throws(DedicatedThread.StartError) {
        self.registry = registry
        self.stores = stores
        self.logger = logger
        self.retryDelays = (firstRetry, longestRetry)
        self.clock = clock
        // Not joined: the thread ends when `stop` has written what was queued.
        _ = try DedicatedThread(name: "registry-writer") { [self] in self.run() }
    }

    /// Queues `changes` to be written after everything queued before; returns at once. `afterWrite` runs on the
    /// writer's thread once they are written (never, if they cannot be before the writer stops).
    public func enqueue(_ changes: RegistryChanges, afterWrite: AfterWrite? = nil) {
        guard !changes.isEmpty else {
            afterWrite?()
            return
        }
        state.withLock { state in
            state.surveySamplesDropped += state.waiting.merge(changes)
            if let afterWrite { state.waitingAfterWrite.append(afterWrite) }
        }
        signal()
    }

    private func signal() {
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
    }

    /// Queues `changes` as the batch `id`, written at most once by its id (a batch a previous run kept in its local
    /// cache: written already if the database has its id), before anything queued later.
    public func enqueue(batch changes: RegistryChanges, id: String) {
        guard !changes.isEmpty else { return }
        state.withLock { $0.sealed.append((changes, id, [])) }
        signal()
    }

    /// Everything not yet written, each as a batch with the id it will be written under (what waits is given one now):
    /// for a local cache to keep, so that a restart writes it at most once (`enqueue(batch:id:)`).
    public func pendingBatches() -> [(id: String, changes: RegistryChanges)] {
        state.withLock { state in
            if !state.waiting.isEmpty {
                // Into the last batch sealed this run and not yet taken (its id never reached the database, and a cache
                // written later supersedes the one that holds it smaller), so that a long outage keeps one batch.
                if let last = state.sealed.indices.last, state.sealed[last].id.hasPrefix(writerID) {
                    state.surveySamplesDropped += state.sealed[last].changes.merge(state.waiting)
                    state.sealed[last].afterWrite += state.waitingAfterWrite
                } else {
                    state.sealings += 1
                    state.sealed.append((state.waiting, "\(writerID)-sealed-\(state.sealings)", state.waitingAfterWrite))
                }
                state.waiting = RegistryChanges()
                state.waitingAfterWrite = []
            }
            return (state.failed.map { [($0.id, $0.changes)] } ?? []) + state.sealed.map { ($0.id, $0.changes) }
        }
    }

    /// What waits, and what is wrong (naming the database's file or host).
    public var status: Status {
        // Health names the file or host as well as the cause.
        state.withLock {
            Status(
                queued: $0.waiting.count + ($0.failed?.changes.count ?? 0) + $0.sealed.reduce(0) { $0 + $1.changes.count },
                failure: $0.failure.map { "\(registry.location): \($0)" }, failingSince: $0.failingSince,
                surveySamplesDropped: $0.surveySamplesDropped)
        }
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
            return state.waiting.count + (state.failed?.changes.count ?? 0) + state.sealed.reduce(0) { $0 + $1.changes.count }
        }
        if left > 0 {
            logger.error(
                "stopped with registry writes not saved",
                metadata: [
                    "database": "\(registry.location)", "rows": "\(left)",
                    "cause": "\(status.failure ?? "the database did not answer in time")",
                ])
        }
        return left == 0
    }

    private func run() {
        var delay = retryDelays.first
        var batches = 0
        while true {
            wakeUp.lock()
            while state.withLock({ $0.waiting.isEmpty && $0.failed == nil && $0.sealed.isEmpty && !$0.stopping }) { wakeUp.wait() }
            wakeUp.unlock()
            let (batch, stop) = state.withLock { state -> ((changes: RegistryChanges, id: String, afterWrite: [AfterWrite])?, Bool) in
                if let failed = state.failed { return (failed, state.stopped) }
                if !state.sealed.isEmpty {
                    state.failed = state.sealed.removeFirst()
                    return (state.failed, state.stopped)
                }
                guard !state.waiting.isEmpty else { return (nil, state.stopped) }
                batches += 1
                let batch = (changes: state.waiting, id: "\(writerID)-\(batches)", afterWrite: state.waitingAfterWrite)
                state.waiting = RegistryChanges()
                state.waitingAfterWrite = []
                // Kept here until written: a failure leaves it to be tried again, as it is, first.
                state.failed = batch
                return (batch, state.stopped)
            }
            if stop { return }
            guard let (changes, batchID, afterWrite) = batch else {
                state.withLock { $0.stopped = true }
                return
            }
            do {
                try registry.apply(changes, batch: batchID, stores: stores)
                delay = retryDelays.first
                for action in afterWrite { action() }
                let recovered = state.withLock { state -> (String, Timestamp)? in
                    state.failed = nil
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
                            "database": "\(registry.location)", "rows": "\(changes.count)",
                            "failedFor": "\((clock() - since).wholeMilliseconds / 1000) s",
                            "cause": "\(failure)",
                        ])
                }
            } catch {
                let cause = registry.describe(error)
                let isNew = state.withLock { state -> Bool in
                    defer { state.failure = cause }
                    if state.failingSince == nil { state.failingSince = clock() }
                    return state.failure != cause
                }
                if isNew {
                    logger.error(
                        "cannot write to the registry database; presence goes on, writes wait and are retried",
                        metadata: [
                            "database": "\(registry.location)", "cause": "\(cause)", "waiting": "\(changes.count)",
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
}
