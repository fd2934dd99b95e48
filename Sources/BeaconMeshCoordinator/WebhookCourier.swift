import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshThreads
import Foundation
import Logging
import Metrics
import Synchronization

/// Delivers one endpoint's webhooks from the registry's outbox, on a thread of its own (so a slow receiver stalls
/// no other endpoint, and never the decisions): the oldest delivery first, one at a time, so the endpoint gets them
/// in order; up to a removal group of them are sent in one run on the client's event loop, so this thread wakes once
/// a group, not once a POST. A delivery leaves the outbox once the receiver took it (any 2xx), refused it for good (a
/// 4xx other than 408 and 429) or 24 hours of retries went by; otherwise it is tried again after a backoff (1 s
/// doubling up to `longestRetry`, with jitter), and nothing after it goes first. Rows are removed in groups after they were
/// delivered, so a coordinator killed in between delivers those again (at least once: receivers drop duplicates by
/// `BeaconMesh-Event-Id`).
///
/// With leases it delivers only for the stores this coordinator decides (`stores`): a standby that takes a store
/// over delivers what its holder left in the outbox.
final class WebhookCourier: Sendable {
    let endpoint: WebhookEndpoint
    private let outbox: any WebhookOutbox
    private let client: WebhookClient
    private let stores: DeliveringStores
    private let logger: Logger
    private let clock: @Sendable () -> Timestamp
    private let longestRetry: Duration
    private let state: Mutex<State>
    private let wakeUp = NSCondition()
    private let thread = Mutex<DedicatedThread?>(nil)
    private let metrics: Metrics

    /// How long a delivery is retried before it is given up.
    static let retryFor: Duration = .seconds(24 * 3600)
    /// How many deliveries are read from the outbox at a time.
    static let batch = 256
    /// Delivered rows are removed from the outbox this many at a time, or after this long.
    static let removalGroup = 64
    static let removalDelay: Duration = .milliseconds(200)

    private struct State {
        var health: CoordinatorHealth.Webhook
        var woken = false
        var stopping = false
    }

    private struct Metrics {
        let delivered: Counter
        let failed: Counter
        let refused: Counter
        let expired: Counter
        let backlog: Gauge

        init(endpoint: String) {
            func counter(_ result: String) -> Counter {
                Counter(label: "beaconmesh_webhook_deliveries_total", dimensions: [("endpoint", endpoint), ("result", result)])
            }
            delivered = counter("delivered")
            failed = counter("failed")
            refused = counter("refused")
            expired = counter("expired")
            backlog = Gauge(label: "beaconmesh_webhook_backlog", dimensions: [("endpoint", endpoint)])
        }
    }

    init(
        endpoint: WebhookEndpoint, outbox: any WebhookOutbox, client: WebhookClient, stores: DeliveringStores, logger: Logger,
        longestRetry: Duration = .seconds(30), clock: @escaping @Sendable () -> Timestamp
    ) {
        self.endpoint = endpoint
        self.outbox = outbox
        self.client = client
        self.stores = stores
        self.logger = logger
        self.clock = clock
        self.longestRetry = longestRetry
        self.state = Mutex(State(health: CoordinatorHealth.Webhook(name: endpoint.name, backlog: 0)))
        self.metrics = Metrics(endpoint: endpoint.name)
    }

    func start() throws(DedicatedThread.StartError) {
        let started = try DedicatedThread(name: "webhook", priority: .idle) { [self] in self.run() }
        thread.withLock { $0 = started }
    }

    /// New deliveries may be in the outbox (the registry writer wrote some).
    func wake() {
        wakeUp.lock()
        state.withLock { $0.woken = true }
        wakeUp.signal()
        wakeUp.unlock()
    }

    /// Stops after the POST under way, and closes the client.
    func stop() {
        wakeUp.lock()
        state.withLock { $0.stopping = true }
        wakeUp.signal()
        wakeUp.unlock()
        thread.withLock { $0 }?.join()
        client.shutdown()
    }

    /// For health.
    var health: CoordinatorHealth.Webhook { state.withLock { $0.health } }

    private var stopping: Bool { state.withLock { $0.stopping } }

    /// Waits until woken, stopped or `duration` passed.
    private func pause(_ duration: Duration) {
        let until = Date().addingTimeInterval(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        wakeUp.lock()
        while !state.withLock({ $0.woken || $0.stopping }), wakeUp.wait(until: until) {}
        state.withLock { $0.woken = false }
        wakeUp.unlock()
    }

    private func run() {
        var failures = 0
        /// Deliveries done with whose removal has not reached the database yet (it may be away).
        var done: [Int64] = []
        var doneSet: Set<Int64> = []
        var outboxFailing = false
        /// While backing off: when the next attempt is due (a wake only refreshes the backlog until then).
        var retryAt: ContinuousClock.Instant?
        /// Delivered rows are crossed off in groups (at most `removalDelay` late): one write for many deliveries. A
        /// coordinator killed meanwhile delivers those again (at least once).
        var lastRemoval = ContinuousClock.now
        /// Deliveries done with since the start, and the last count of the backlog (with how many were done then).
        var finished = 0
        var counted: (at: ContinuousClock.Instant, owed: Int, finished: Int, stores: Set<UInt16>)?
        while !stopping {
            let delivering = stores.current
            let pending: [WebhookDelivery]
            do {
                if !done.isEmpty, done.count >= Self.removalGroup || ContinuousClock.now - lastRemoval >= Self.removalDelay {
                    try outbox.removeWebhookDeliveries(done)
                    done.removeAll()
                    doneSet.removeAll()
                    lastRemoval = ContinuousClock.now
                }
                pending =
                    delivering.isEmpty
                    ? []
                    : try outbox.pendingWebhookDeliveries(
                        endpoint: endpoint.name, stores: delivering, limit: Self.batch)
                let backlog: Int
                if pending.count < Self.batch {
                    backlog = pending.count - pending.count(where: { doneSet.contains($0.seq) })
                } else {
                    // A long backlog is counted at most once a second (a count reads every row), and in between
                    // told down by what was done since.
                    if counted == nil || counted?.stores != delivering || ContinuousClock.now - counted!.at >= .seconds(1) {
                        let rows = try outbox.webhookBacklog(endpoint: endpoint.name, stores: delivering)
                        counted = (ContinuousClock.now, rows - doneSet.count, finished, delivering)
                    }
                    backlog = max(0, counted!.owed - (finished - counted!.finished))
                }
                state.withLock { $0.health.backlog = backlog }
                metrics.backlog.record(backlog)
                if outboxFailing {
                    outboxFailing = false
                    logger.notice("webhook outbox readable again", metadata: ["endpoint": "\(endpoint.name)"])
                }
            } catch {
                if !outboxFailing {
                    outboxFailing = true
                    logger.warning(
                        "webhook outbox cannot be read; deliveries wait",
                        metadata: ["endpoint": "\(endpoint.name)", "error": "\(outbox.describe(error))"])
                }
                pause(.seconds(2))
                continue
            }
            let waiting = pending.filter { !doneSet.contains($0.seq) }
            if waiting.isEmpty {
                // Back soon to cross off what was delivered, otherwise in a second (or when woken).
                pause(done.isEmpty ? .seconds(1) : Self.removalDelay)
                continue
            }
            if let due = retryAt, ContinuousClock.now < due {
                pause(due - ContinuousClock.now)
                continue
            }
            retryAt = nil
            var deliveredAll = true
            var rest = waiting[...]
            while deliveredAll, !rest.isEmpty {
                // A removal group at a time, sent in one run on the client's loop that also ends after the removal
                // delay: then what was delivered is crossed off, as often as if each POST were sent from here.
                let group = Array(rest.prefix(Self.removalGroup))
                let now = clock()
                let began = ContinuousClock.now
                let posts = group.map { WebhookClient.Post(body: $0.body, eventID: $0.eventID) }
                let outcomes = client.post(posts, clock: clock) { [self] index, before in
                    if case .failed = before, now - group[index - 1].createdAt < Self.retryFor { return false }
                    if index > 0, ContinuousClock.now - began >= Self.removalDelay { return false }
                    return !stopping && stores.current.contains(group[index].store)
                }
                deliveredAll = outcomes.count == group.count
                for (delivery, outcome) in zip(group, outcomes) {
                    if case .failed(let cause) = outcome, now - delivery.createdAt < Self.retryFor {
                        failures += 1
                        record(failure: cause)
                        // Backoff with jitter: between half and all of 1 s doubled per failure, up to `longestRetry`.
                        let full = min(longestRetry, .seconds(1) * (1 << min(failures - 1, 20)))
                        retryAt = ContinuousClock.now + full * Double.random(in: 0.5...1.0)
                        deliveredAll = false
                        break
                    }
                    failures = 0
                    finished += 1
                    done.append(delivery.seq)
                    doneSet.insert(delivery.seq)
                    record(outcome, delivery)
                }
                rest = rest.dropFirst(group.count)
                if done.count >= Self.removalGroup || ContinuousClock.now - lastRemoval >= Self.removalDelay {
                    if (try? outbox.removeWebhookDeliveries(done)) != nil {
                        done.removeAll()
                        doneSet.removeAll()
                    }
                    lastRemoval = ContinuousClock.now
                }
            }
            if deliveredAll && pending.count < Self.batch {
                // The whole backlog went out: nothing is owed until the writer wakes us (a wake during the POSTs
                // counts), so the outbox is not read again just to find that.
                state.withLock { $0.health.backlog = 0 }
                metrics.backlog.record(0)
                pause(done.isEmpty ? .seconds(1) : Self.removalDelay)
            }
        }
        if !done.isEmpty { try? outbox.removeWebhookDeliveries(done) }
    }

    private func record(failure cause: String) {
        metrics.failed.increment()
        let first = state.withLock { state -> Bool in
            state.health.failed += 1
            state.health.error = cause
            defer { if state.health.failingSince == nil { state.health.failingSince = clock() } }
            return state.health.failingSince == nil
        }
        if first { logger.warning("webhook delivery failed; retrying", metadata: ["endpoint": "\(endpoint.name)", "cause": "\(cause)"]) }
    }

    private func record(_ outcome: WebhookClient.Outcome, _ delivery: WebhookDelivery) {
        let recovered = state.withLock { state -> Bool in
            defer {
                state.health.error = nil
                state.health.failingSince = nil
            }
            return state.health.failingSince != nil
        }
        if recovered { logger.notice("webhook deliveries go through again", metadata: ["endpoint": "\(endpoint.name)"]) }
        switch outcome {
        case .delivered:
            metrics.delivered.increment()
            state.withLock { $0.health.delivered += 1 }
        case .refused(let status):
            metrics.refused.increment()
            state.withLock { $0.health.refused += 1 }
            logger.warning(
                "webhook delivery refused; not retried",
                metadata: ["endpoint": "\(endpoint.name)", "status": "\(status)", "event": "\(delivery.eventID)"])
        case .failed(let cause):
            metrics.expired.increment()
            state.withLock { $0.health.expired += 1 }
            logger.error(
                "webhook delivery given up after 24 h of retries",
                metadata: ["endpoint": "\(endpoint.name)", "event": "\(delivery.eventID)", "cause": "\(cause)"])
        }
    }
}

/// The stores this coordinator delivers webhooks for: those it decides (all of its stores without leases).
final class DeliveringStores: Sendable {
    private let stores: Mutex<Set<UInt16>>

    init(_ stores: Set<UInt16>) {
        self.stores = Mutex(stores)
    }

    var current: Set<UInt16> {
        get { stores.withLock { $0 } }
        set { stores.withLock { $0 = newValue } }
    }
}
