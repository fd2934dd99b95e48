import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshThreads
import BeaconMeshWire
import Foundation
import Logging
import Synchronization

/// One look at the registry for what others changed (another coordinator, the `members` command): registry events
/// waiting in the outbox are claimed and published, and the changes the registry's change feed reports are read and
/// handed to the decisions — the members it names (PostgreSQL announces each change, SQLite's triggers log them), or
/// everything (after the feed was interrupted, when announcements may have been missed, or when thousands changed).
///
/// Reading the registry blocks (GRDB, or PostgreSQL behind a network), so `run(with:…)` looks on a thread of its own,
/// never on one of the concurrency pool's few threads, which decode messages and make the decisions: a slow, locked or
/// unreachable database delays the poll only.
struct RegistryPoll: Sendable {
    /// The registry as the decisions know it, to tell what a whole read changed.
    private var contents: RegistryContents
    /// The last failure logged (a failure is logged once until the reads work again).
    private var lastFailure: String?
    private var outbox: RegistryEventOutbox
    private var surveys: SurveyWatch
    /// The change feed, shared with whoever stops the poll (`FeedHolder.close()`), so that it reaches the look
    /// that waits on it.
    let feed: FeedHolder

    init(
        contents: RegistryContents, coordinatorID: String, stores: Set<UInt16>, references: [UInt16: Set<BeaconKey>] = [:],
        feed: FeedHolder = FeedHolder()
    ) {
        self.contents = contents
        self.feed = feed
        surveys = SurveyWatch(stores: stores, references: references)
        outbox = RegistryEventOutbox(coordinatorID: coordinatorID)
    }

    /// Everything one look needs besides its own state.
    struct Parts: Sendable {
        let registry: any RegistryReading & SurveyRegistry
        let publisher: any MQTTClientProtocol
        let topics: Topics
        let writer: RegistryWriter
        let inbox: DecisionInbox
        let reachability: RegistryReachability
        let logger: Logger
        /// The webhooks owed registry events (`member-forgotten`), delivered by the holder of the first store this
        /// coordinator decides.
        var webhooks: (routes: WebhookRoutes, stores: DeliveringStores, fallback: UInt16)? = nil
        /// The members' Eddystone-EID fobs resolved on the way to the decisions: told of fobs added, changed or gone.
        var fobs: FobResolution? = nil
    }

    /// Looks again and again on a thread of its own, each look waiting up to `wait` for a change, until the feed is
    /// closed; returns when the thread has ended. Throws if the system refuses a thread.
    ///
    /// The poll is moved to the thread, never copied (call it as `await (consume poll).run(…)`): a copy would share
    /// `contents` with the caller's, and each change applied would copy every member of the registry.
    consuming func run(with parts: Parts, wait: Duration) async throws(DedicatedThread.StartError) {
        let feed = self.feed
        let handOver = HandOver(consume self)
        var refused: DedicatedThread.StartError?
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            // Returns when the thread ends or the feed is closed, whichever comes first: a look blocked behind a cut
            // line (a connection attempt waits for its timeout) must not hold up a shutdown. It ends by itself after.
            let once = Once(ended)
            feed.whenClosed { once.resume() }
            do throws(DedicatedThread.StartError) {
                // Not joined: the continuation says when it ends.
                _ = try DedicatedThread(name: "registry-poll", priority: .background) {
                    var poll = handOver.take()
                    while !feed.isClosed {
                        guard !poll.poll(parts, wait: wait) else { continue }
                        // The database is away (a refused connection fails at once): look again after `wait`.
                        let until = ContinuousClock.now + wait
                        while !feed.isClosed, ContinuousClock.now < until { usleep(50_000) }
                    }
                    once.resume()
                }
            } catch {
                refused = error
                once.resume()
            }
        }
        if let refused { throw refused }
    }

    /// Resumes a continuation the first time it is asked to.
    private final class Once: Sendable {
        private let continuation: Mutex<CheckedContinuation<Void, Never>?>

        init(_ continuation: CheckedContinuation<Void, Never>) {
            self.continuation = Mutex(continuation)
        }

        func resume() {
            let waiting = continuation.withLock { $0.take() }
            waiting?.resume()
        }
    }

    /// Stops watching: a look waiting on the feed returns, and later looks return at once.
    func close() { feed.close() }

    /// The feed, made at the first look (making it reads the database, which may be away).
    final class FeedHolder: Sendable {
        private let state = Mutex<(feed: (any RegistryChangeFeed)?, closed: Bool)>((nil, false))
        private let onClose = Mutex<[@Sendable () -> Void]>([])

        /// Runs `action` when the holder is closed (at once if it is).
        func whenClosed(_ action: @escaping @Sendable () -> Void) {
            let closed = state.withLock { $0.closed }
            if closed { return action() }
            onClose.withLock { $0.append(action) }
            if state.withLock({ $0.closed }) { runClosers() }
        }

        private func runClosers() {
            for action in onClose.withLock({ actions in
                defer { actions = [] }
                return actions
            }) { action() }
        }

        func feed(from registry: any RegistryReading) throws -> (any RegistryChangeFeed)? {
            let (existing, closed) = state.withLock { ($0.feed, $0.closed) }
            if closed { return nil }
            if let existing { return existing }
            let feed = try registry.changeFeed()
            let closedMeanwhile = state.withLock { state in
                if !state.closed { state.feed = feed }
                return state.closed
            }
            if closedMeanwhile { feed.close() }
            return closedMeanwhile ? nil : feed
        }

        /// Whether `close()` was called.
        var isClosed: Bool { state.withLock { $0.closed } }

        func close() {
            let feed = state.withLock { state in
                state.closed = true
                return state.feed
            }
            feed?.close()
            runClosers()
        }
    }

    /// One look; `false` when the registry could not be read.
    private mutating func poll(_ parts: Parts, wait: Duration) -> Bool {
        do {
            parts.reachability.reading()
            // Registry events the `members` command (or the CSV at start) left in the outbox.
            var owed: [WebhookDelivery] = []
            var published = try outbox.publishPending(from: parts.registry) { event in
                try parts.publisher.publish(
                    topic: parts.topics.registryEvents, payload: WireCodec.encode(event), qos: .atLeastOnce, retain: false)
                if let webhooks = parts.webhooks {
                    let store = webhooks.stores.current.min() ?? webhooks.fallback
                    owed += webhooks.routes.deliveries(for: event, store: store, at: WallClock.now())
                }
            }
            // Written with the events' removal from their outbox: at once, or again after a restart.
            for delivery in owed { published.queueWebhook(delivery) }
            parts.writer.enqueue(published)
            let (fits, baselines, unreadable) = try surveys.look(at: parts.registry, now: .now)
            parts.inbox.surveysChanged(fits, baselines: baselines)
            for (store, error) in unreadable {
                parts.logger.error(
                    "cannot read the store's new survey fit; deciding it as before",
                    metadata: ["store": "\(store)", "cause": "\(parts.registry.describe(error))"])
            }
            guard let feed = try feed.feed(from: parts.registry) else { return true }
            parts.reachability.answered()
            let change = try feed.next(timeout: wait)
            parts.reachability.reading()
            switch change {
            case .nothing:
                break
            case .everything:
                // Read whole, handed over as the difference: the decisions take only the members that changed.
                let read = try parts.registry.contents()
                let changes = read.changes(since: contents)
                parts.fobs?.update(
                    gone: Set(contents.fobs.filter { read.fobs[$0.key] != $0.value }.values.map(\.handle)),
                    added: read.fobs.filter { contents.fobs[$0.key] != $0.value }, at: WallClock.now().milliseconds / 1000)
                parts.inbox.membersChanged(changes)
                Self.log(changes, by: parts.logger)
                contents = read
            case .members(let ids):
                let records = try parts.registry.members(ids: ids)
                let changes = MemberChanges(records: records, removed: ids.subtracting(records.map(\.id)))
                var fobs: [String: MemberFob?] = [:]
                for record in records { fobs[record.id] = .some(record.fob) }
                for member in changes.removed { fobs[member] = .some(nil) }
                // The fobs before the change (in `contents` until it is applied) leave; the new ones come.
                let changed = fobs.filter { contents.fobs[$0.key] != $0.value }
                parts.fobs?.update(
                    gone: Set(changed.keys.compactMap { contents.fobs[$0]?.handle }),
                    added: changed.compactMapValues { $0 }, at: WallClock.now().milliseconds / 1000)
                contents.apply(changes)
                parts.inbox.membersChanged(changes)
                Self.log(changes, by: parts.logger)
            }
            parts.reachability.answered()
            if let failure = lastFailure {
                parts.logger.notice(
                    "registry readable again", metadata: ["database": "\(parts.registry.location)", "cause": "\(failure)"])
            }
            lastFailure = nil
            return true
        } catch {
            let cause = parts.registry.describe(error)
            parts.reachability.failed(cause)
            guard cause != lastFailure else { return false }
            lastFailure = cause
            parts.logger.error(
                "could not read the registry's changes; retrying",
                metadata: ["database": "\(parts.registry.location)", "cause": "\(cause)"])
            return false
        }
    }
}

extension RegistryPoll {
    /// Says which members others changed (an operator sees a `members add` arrive; a test waits for it instead of
    /// guessing how long the poll takes): their ids, at most 20 of each kind.
    static func log(_ changes: MemberChanges, by logger: Logger) {
        guard !changes.records.isEmpty || !changes.removed.isEmpty else { return }
        func ids(_ all: [String]) -> String {
            let sorted = all.sorted()
            return sorted.prefix(20).joined(separator: ",") + (sorted.count > 20 ? " and \(sorted.count - 20) more" : "")
        }
        logger.info(
            "members changed in the registry",
            metadata: ["changed": "\(ids(Array(changes.records.keys)))", "removed": "\(ids(Array(changes.removed)))"])
    }
}
