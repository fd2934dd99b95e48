import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshThreads
import Logging
import Metrics
import NIOCore
import Synchronization

/// Delivers one endpoint's webhooks from the registry's outbox: performs the steps its `WebhookDispatch` decides —
/// reading and crossing off the outbox on the couriers' database thread, POSTing through the program's one
/// `WebhookClient`, waiting on the clock or for the writer's word that new deliveries are owed — and reports what
/// became of them in health, metrics and the log. A slow receiver stalls only its own endpoint, never the decisions.
///
/// With leases it delivers only for the stores this coordinator decides (`stores`): a standby that takes a store
/// over delivers what its holder left in the outbox. Cancelled (the coordinator stops), it crosses off what it
/// delivered and returns; a POST under way is abandoned and sent again at the next start.
final class WebhookCourier: Sendable {
    let endpoint: WebhookEndpoint
    private let target: WebhookClient.Target
    private let outbox: any WebhookOutbox
    private let stores: DeliveringStores
    private let logger: Logger
    private let clock: any ServiceClock
    private let rules: WebhookDispatch.Rules
    private let reported: Mutex<CoordinatorHealth.Webhook>
    private let announcements = Mailbox(Announcement())
    private let metrics: Metrics

    init(
        endpoint: WebhookEndpoint, outbox: any WebhookOutbox, stores: DeliveringStores, logger: Logger,
        clock: any ServiceClock, rules: WebhookDispatch.Rules = WebhookDispatch.Rules()
    ) throws {
        self.endpoint = endpoint
        self.target = try WebhookClient.Target(endpoint)
        self.outbox = outbox
        self.stores = stores
        self.logger = logger
        self.clock = clock
        self.rules = rules
        self.reported = Mutex(CoordinatorHealth.Webhook(name: endpoint.name, backlog: 0))
        self.metrics = Metrics(endpoint: endpoint.name)
    }

    /// New deliveries may be in the outbox (the registry writer wrote some).
    func wake() {
        announcements.put { $0.owed = true }
    }

    /// For health.
    var health: CoordinatorHealth.Webhook { reported.withLock { $0 } }

    /// Delivers through `client` until cancelled.
    func run(through client: WebhookClient) async {
        var dispatch = WebhookDispatch(endpoint: endpoint.name, rules: rules, at: clock.now())
        while !Task.isCancelled {
            let now = clock.now()
            let notes: [WebhookDispatch.Note]
            switch dispatch.next(at: now, stores: stores.current) {
            case .crossOff(let seqs):
                do {
                    try await Self.onDatabaseThread { [outbox] in try outbox.removeWebhookDeliveries(seqs) }
                    notes = dispatch.crossedOff(seqs, at: clock.now())
                } catch {
                    notes = dispatch.outboxFailed(outbox.describe(error), at: clock.now())
                }
            case .read(let stores, let limit, let countIfFull):
                do {
                    let (pending, backlog) = try await Self.onDatabaseThread { [outbox, endpoint] in
                        let pending =
                            stores.isEmpty ? [] : try outbox.pendingWebhookDeliveries(endpoint: endpoint.name, stores: stores, limit: limit)
                        let full = countIfFull && pending.count >= limit
                        return (pending, full ? try outbox.webhookBacklog(endpoint: endpoint.name, stores: stores) : nil)
                    }
                    notes = dispatch.read(pending, backlog: backlog, stores: stores, at: clock.now())
                } catch {
                    notes = dispatch.outboxFailed(outbox.describe(error), at: clock.now())
                }
            case .send(let deliveries):
                // A run ends by itself (the last POST answered, a failure, or 200 ms): a stop waits for it, and what it
                // delivered is crossed off below.
                let outcomes = await client.post(
                    deliveries.map { WebhookClient.Post(body: $0.body, eventID: $0.eventID) }, to: target,
                    clock: { [clock] in clock.now() },
                    startBefore: .now() + .milliseconds(Int64(rules.removalDelay / .milliseconds(1))))
                notes = dispatch.answered(outcomes, for: deliveries, at: clock.now(), jitter: .random(in: 0.5...1.0))
            case .wait(let until):
                await waitForAnnouncement(until: until - now)
                dispatch.woke()
                notes = []
            }
            reported.withLock { $0 = dispatch.health }
            metrics.record(notes, backlog: dispatch.health.backlog)
            log(notes)
        }
        if !dispatch.done.isEmpty {
            let done = dispatch.done
            try? await Self.onDatabaseThread { [outbox] in try outbox.removeWebhookDeliveries(done) }
        }
    }

    /// Returns when new deliveries are announced, `duration` passed, or the task is cancelled.
    private func waitForAnnouncement(until duration: Duration) async {
        let clock = self.clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [announcements] in
                _ = await announcements.take { contents -> Bool? in
                    defer { contents.owed = false }
                    return contents.owed ? true : nil
                }
            }
            group.addTask { try? await clock.sleep(for: duration) }
            await group.next()
            group.cancelAll()
        }
    }

    private func log(_ notes: [WebhookDispatch.Note]) {
        let name: Logger.MetadataValue = "\(endpoint.name)"
        for note in notes {
            switch note {
            case .delivered: break
            case .failed(let cause, let first):
                if first { logger.warning("webhook delivery failed; retrying", metadata: ["endpoint": name, "cause": "\(cause)"]) }
            case .recovered:
                logger.notice("webhook deliveries go through again", metadata: ["endpoint": name])
            case .refused(let delivery, let status):
                logger.warning(
                    "webhook delivery refused; not retried",
                    metadata: ["endpoint": name, "status": "\(status)", "event": "\(delivery.eventID)"])
            case .expired(let delivery, let cause):
                logger.error(
                    "webhook delivery given up after 24 h of retries",
                    metadata: ["endpoint": name, "event": "\(delivery.eventID)", "cause": "\(cause)"])
            case .outboxFailing(let error):
                logger.warning("webhook outbox cannot be read; deliveries wait", metadata: ["endpoint": name, "error": "\(error)"])
            case .outboxBack:
                logger.notice("webhook outbox readable again", metadata: ["endpoint": name])
            }
        }
    }

    /// The couriers' one thread for the outbox's blocking calls, at idle priority as their POSTs.
    private static let outboxThread = BackgroundThread(name: "webhook-outbox", priority: .idle)

    private static func onDatabaseThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await outboxThread.run(body)
    }

    /// Whether the writer announced new deliveries since the courier last looked.
    private struct Announcement: MailboxContents {
        var owed = false
        var isFull: Bool { false }
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

        func record(_ notes: [WebhookDispatch.Note], backlog owed: Int) {
            backlog.record(owed)
            for note in notes {
                switch note {
                case .delivered: delivered.increment()
                case .failed: failed.increment()
                case .refused: refused.increment()
                case .expired: expired.increment()
                case .recovered, .outboxFailing, .outboxBack: break
                }
            }
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
