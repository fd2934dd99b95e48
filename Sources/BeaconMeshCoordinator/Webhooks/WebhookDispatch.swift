import BeaconMeshCore
import BeaconMeshRegistry

/// What one endpoint's courier does next, decided purely from what it read of the outbox, the outcomes of its POSTs
/// and the time passed in; the courier (`WebhookCourier`) only performs the steps and reports back.
///
/// The rules: the oldest delivery first, one at a time, so the endpoint gets them in order, and nothing after a failed
/// one goes first. A delivery is done once the receiver took it (any 2xx), refused it for good (a 4xx other than 408
/// and 429) or failed after 24 hours of retries; otherwise it is tried again after a backoff (1 s doubling up to
/// `longestRetry`, times the jitter passed in). Done deliveries are crossed off the outbox in groups (`removalGroup`,
/// or after `removalDelay`): one write for many, and a coordinator killed in between delivers those again (at least
/// once: receivers drop duplicates by `BeaconMesh-Event-Id`). An outbox that cannot be read or written is tried again
/// every `outboxRetry`, and nothing is lost meanwhile.
struct WebhookDispatch: Sendable {
    /// What the courier does next.
    enum Step: Equatable, Sendable {
        /// Remove these done deliveries from the outbox, then report `crossedOff`.
        case crossOff([Int64])
        /// Read the oldest `limit` deliveries owed for `stores` (and, if they fill `limit` and `countIfFull`, count
        /// the whole backlog), then report `read`.
        case read(stores: Set<UInt16>, limit: Int, countIfFull: Bool)
        /// POST these deliveries in order, each once the one before it was taken, stopping at the first failure (a
        /// removal group at most, so what is delivered is crossed off as often as if each were sent alone); then report
        /// `answered`.
        case send([WebhookDelivery])
        /// Nothing to do before `until`, or before new deliveries are announced; then report `woke`.
        case wait(until: Timestamp)
    }

    /// What happened that a person or a metric should hear of.
    enum Note: Equatable, Sendable {
        case delivered(WebhookDelivery, status: Int)
        case refused(WebhookDelivery, status: Int)
        /// Failed after 24 hours of retries: given up.
        case expired(WebhookDelivery, cause: String)
        /// A failure to be retried; `first` when the endpoint was not failing before.
        case failed(cause: String, first: Bool)
        /// The first delivery done after failures.
        case recovered
        case outboxFailing(String)
        case outboxBack
    }

    struct Rules: Sendable {
        var retryFor: Duration = .seconds(24 * 3600)
        var longestRetry: Duration = .seconds(30)
        /// How many deliveries are read from the outbox at a time.
        var batch = 256
        var removalGroup = 64
        var removalDelay: Duration = .milliseconds(200)
        /// How often a full backlog is counted (a count reads every row); in between it is told down.
        var countEvery: Duration = .seconds(1)
        /// How long the outbox is left alone after it failed.
        var outboxRetry: Duration = .seconds(2)
        /// How long the courier waits with nothing owed before it reads the outbox again (unless woken).
        var idleRead: Duration = .seconds(1)
    }

    let rules: Rules
    /// What health reports of the endpoint.
    private(set) var health: CoordinatorHealth.Webhook

    /// Read and not yet sent, oldest first.
    private var queue: [WebhookDelivery] = []
    private var lastReadFull = false
    private var mustRead = true
    /// The stores of the last read: a change (a lease gained or lost) reads again.
    private var readStores: Set<UInt16> = []
    /// Done with, not yet crossed off the outbox.
    private(set) var done: [Int64] = []
    private var doneSet: Set<Int64> = []
    private var lastRemoval: Timestamp
    private var failures = 0
    private var retryAt: Timestamp?
    private var outboxRetryAt: Timestamp?
    private var outboxFailing = false
    /// Deliveries done since the start, and the last count of a long backlog (with how many were done then).
    private var finished = 0
    private var counted: (at: Timestamp, owed: Int, finished: Int, stores: Set<UInt16>)?

    init(endpoint: String, rules: Rules = Rules(), at now: Timestamp) {
        self.rules = rules
        self.health = CoordinatorHealth.Webhook(name: endpoint, backlog: 0)
        self.lastRemoval = now
    }

    /// The next step, for the stores this coordinator delivers for now.
    mutating func next(at now: Timestamp, stores: Set<UInt16>) -> Step {
        if let due = outboxRetryAt, now < due { return .wait(until: due) }
        if !done.isEmpty, done.count >= rules.removalGroup || now - lastRemoval >= rules.removalDelay {
            return .crossOff(done)
        }
        if stores != readStores || mustRead || (queue.isEmpty && lastReadFull) {
            let stale = counted.map { $0.stores != stores || now - $0.at >= rules.countEvery } ?? true
            return .read(stores: stores, limit: rules.batch, countIfFull: stale)
        }
        if let due = retryAt, now < due { return .wait(until: due) }
        if !queue.isEmpty { return .send(Array(queue.prefix(rules.removalGroup))) }
        // Nothing owed as far as we know: back soon to cross off what was done, else read again in a while.
        return .wait(until: done.isEmpty ? now + rules.idleRead : lastRemoval + rules.removalDelay)
    }

    /// The outbox read: `pending` the oldest deliveries owed for `stores`, `backlog` all of them if counted.
    mutating func read(_ pending: [WebhookDelivery], backlog: Int?, stores: Set<UInt16>, at now: Timestamp) -> [Note] {
        queue = pending.filter { !doneSet.contains($0.seq) }
        lastReadFull = pending.count >= rules.batch
        mustRead = false
        readStores = stores
        if let backlog { counted = (now, backlog - doneSet.count, finished, stores) }
        updateBacklog()
        return outboxReached()
    }

    /// The done deliveries `seqs` are off the outbox.
    mutating func crossedOff(_ seqs: [Int64], at now: Timestamp) -> [Note] {
        let removed = Set(seqs)
        done.removeAll { removed.contains($0) }
        doneSet.subtract(removed)
        lastRemoval = now
        return outboxReached()
    }

    /// The outbox could not be read or written (`error`, described): left alone for `outboxRetry`.
    mutating func outboxFailed(_ error: String, at now: Timestamp) -> [Note] {
        outboxRetryAt = now + rules.outboxRetry
        mustRead = true
        guard !outboxFailing else { return [] }
        outboxFailing = true
        return [.outboxFailing(error)]
    }

    /// A wait ended (its time came, or new deliveries were announced): the outbox is read again.
    mutating func woke() {
        mustRead = true
    }

    /// The receiver's answers to the deliveries sent (`outcomes`: of the first of `deliveries`, in order; the rest were
    /// not sent), at `now`; `jitter` (0.5 to 1) scales the backoff of a failure.
    mutating func answered(
        _ outcomes: [WebhookClient.Outcome], for deliveries: [WebhookDelivery], at now: Timestamp, jitter: Double
    ) -> [Note] {
        var notes: [Note] = []
        for (delivery, outcome) in zip(deliveries, outcomes) {
            let answer = answered(delivery, outcome, at: now, jitter: jitter)
            notes += answer
            if case .failed = answer.last { break }
        }
        return notes
    }

    /// The receiver's answer to `delivery` (the head), at `now`; `jitter` (0.5 to 1) scales the backoff of a failure.
    mutating func answered(_ delivery: WebhookDelivery, _ outcome: WebhookClient.Outcome, at now: Timestamp, jitter: Double)
        -> [Note]
    {
        guard queue.first?.seq == delivery.seq else { return [] }
        if case .failed(let cause) = outcome, now - delivery.createdAt < rules.retryFor {
            failures += 1
            health.failed += 1
            health.error = cause
            let first = health.failingSince == nil
            if first { health.failingSince = now }
            let full = min(rules.longestRetry, .seconds(1) * (1 << min(failures - 1, 20)))
            retryAt = now + full * jitter
            return [.failed(cause: cause, first: first)]
        }
        queue.removeFirst()
        failures = 0
        retryAt = nil
        finished += 1
        done.append(delivery.seq)
        doneSet.insert(delivery.seq)
        var notes: [Note] = []
        if health.failingSince != nil {
            health.failingSince = nil
            health.error = nil
            notes.append(.recovered)
        }
        switch outcome {
        case .delivered(let status):
            health.delivered += 1
            notes.append(.delivered(delivery, status: status))
        case .refused(let status):
            health.refused += 1
            notes.append(.refused(delivery, status: status))
        case .failed(let cause):
            health.expired += 1
            notes.append(.expired(delivery, cause: cause))
        }
        updateBacklog()
        return notes
    }

    private mutating func updateBacklog() {
        if lastReadFull, let counted {
            health.backlog = max(0, counted.owed - (finished - counted.finished))
        } else {
            health.backlog = queue.count
        }
    }

    private mutating func outboxReached() -> [Note] {
        outboxRetryAt = nil
        guard outboxFailing else { return [] }
        outboxFailing = false
        return [.outboxBack]
    }
}
