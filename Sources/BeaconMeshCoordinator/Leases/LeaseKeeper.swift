import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshThreads
import Foundation
import Logging
import Synchronization

/// Keeps the coordinator's store leases, off the decisions: on a thread of its own it claims and renews them every
/// `renewInterval` and hands each answer, with when it was sent, to the decisions (`DecisionInbox.leasesRenewed`);
/// on a thread of its own it reads what a take-over needs when the decisions ask (`load`); at a clean stop it
/// releases them, so that a standby takes the stores over at its next claim instead of after the ttl.
///
/// It decides nothing: whether a store may be decided for is the decisions' `LeaseBook`, from the answers and the
/// monotonic clock, so a renewal that hangs or fails can never keep a lease alive. When a renewal was sent is read on
/// the service's clock (`ServiceClock.instant()`, so tests move it); its pace is real time, as the database's is.
final class LeaseKeeper: Sendable {
    private let leases: any StoreLeases
    private let registry: any RegistryReading & SurveyRegistry
    private let stores: [UInt16]
    private let holder: String
    private let ttl: Duration
    private let renewInterval: Duration
    private let inbox: DecisionInbox
    private let logger: Logger
    private let clock: any ServiceClock
    /// Whether each renewal also reads who holds the other stores (for the `storeUndecided` alert rules).
    private let readsHolders: Bool
    /// This coordinator's `webhooks:` list, recorded beside its claims and compared with the others' after each.
    private let webhooks: WebhookList
    private let wakeUp = NSCondition()
    private let state = Mutex(State())

    private struct State {
        var stopping = false
        var stopped = false
        var failing: String?
        /// The other coordinators whose webhook lists differ from ours, as the last comparison found them.
        var listsDiffer: [String: WebhookList] = [:]
    }

    /// A keeper of `holder`'s leases of `stores` in `leases`, each for `ttl`, renewed every `renewInterval`; take-overs
    /// are read from `registry`; answers go to `inbox`.
    init(
        leases: any StoreLeases, registry: any RegistryReading & SurveyRegistry, stores: [UInt16], holder: String, ttl: Duration,
        renewInterval: Duration, inbox: DecisionInbox, logger: Logger, clock: any ServiceClock, readsHolders: Bool = false,
        webhooks: WebhookList
    ) {
        self.readsHolders = readsHolders
        self.webhooks = webhooks
        self.leases = leases
        self.registry = registry
        self.stores = stores
        self.holder = holder
        self.ttl = ttl
        self.renewInterval = renewInterval
        self.inbox = inbox
        self.logger = logger
        self.clock = clock
    }

    /// Starts claiming and renewing; throws if the system refuses a thread.
    func start() throws(DedicatedThread.StartError) {
        // Not joined: the thread ends after `stop` has released the leases.
        _ = try DedicatedThread(name: "lease-keeper") { [self] in self.run() }
    }

    private func run() {
        while !state.withLock({ $0.stopping }) {
            let paceStart = ContinuousClock.now
            let sentAt = clock.instant()
            do {
                let held = try leases.claim(stores, for: holder, ttl: ttl)
                inbox.leasesRenewed(held, sentAt: sentAt, undecided: readsHolders ? try undecided(besides: held) : nil)
                let recovered = state.withLock { state in
                    defer { state.failing = nil }
                    return state.failing
                }
                if let failure = recovered {
                    logger.notice("leases renewed again", metadata: ["after": "\(failure)"])
                }
                compareWebhookLists()
            } catch {
                let reason = registry.describe(error)
                let first = state.withLock { state in
                    defer { state.failing = reason }
                    return state.failing == nil
                }
                if first {
                    logger.error(
                        "cannot renew the store leases: standing by for the stores as their leases run out",
                        metadata: ["database": "\(registry.location)", "error": "\(reason)"])
                }
            }
            let next = paceStart + renewInterval
            wakeUp.lock()
            while !state.withLock({ $0.stopping }), ContinuousClock.now < next {
                let left = ContinuousClock.now.duration(to: next)
                _ = wakeUp.wait(until: Date(timeIntervalSinceNow: Double(left.wholeMilliseconds) / 1000 + 0.001))
            }
            wakeUp.unlock()
        }
        wakeUp.lock()
        state.withLock { $0.stopped = true }
        wakeUp.broadcast()
        wakeUp.unlock()
    }

    /// The other coordinators whose `webhooks:` lists differ from this one's, for health; by id.
    var webhookListsDiffer: [CoordinatorHealth.WebhookListDifference] {
        state.withLock { $0.listsDiffer }.sorted { $0.key < $1.key }.map { .init(coordinator: $0.key, endpoints: $0.value.endpoints) }
    }

    /// Records this coordinator's webhook list beside its claims and reads the others'; a coordinator whose list
    /// differs is named in one line when it is first found (at the start, or when it starts later), and again when
    /// the lists agree once more. A failure here is no renewal's: the next renewal tries again.
    private func compareWebhookLists() {
        let others: [String: WebhookList]
        do {
            others = try leases.exchangeWebhookLists(webhooks, for: holder, ttl: ttl)
        } catch {
            logger.debug("cannot compare the webhook lists", metadata: ["error": "\(registry.describe(error))"])
            return
        }
        let differ = others.filter { $0.value.fingerprint != webhooks.fingerprint }
        let before = state.withLock { state in
            defer { state.listsDiffer = differ }
            return state.listsDiffer
        }
        for (other, list) in differ.sorted(by: { $0.key < $1.key }) where before[other] != list {
            logger.warning(
                """
                the webhooks: of coordinator \(holder) (\(Self.names(webhooks))) differ from coordinator \(other)'s \
                (\(Self.names(list))): a store one of them takes over from the other is delivered to another list
                """)
        }
        for other in before.keys.sorted() where differ[other] == nil && others[other] != nil {
            logger.notice("the webhooks: of coordinator \(holder) and coordinator \(other) agree again")
        }
    }

    private static func names(_ list: WebhookList) -> String {
        list.endpoints.isEmpty ? "none" : list.endpoints.joined(separator: ", ")
    }

    /// The stores of this coordinator that nobody decides now — neither held here nor under another's unexpired
    /// lease (a holder gone, or one whose lease runs out unfenced) — each with since when (the lease's expiry, the same
    /// for every coordinator that looks, or now when there is no lease at all).
    private func undecided(besides held: [UInt16: LeaseGrant]) throws -> [UInt16: Timestamp] {
        let now = clock.now()
        let live = try leases.holders()
        var undecided: [UInt16: Timestamp] = [:]
        for store in stores where held[store] == nil {
            if let lease = live[store], lease.expiresAt > now { continue }
            undecided[store] = live[store]?.expiresAt ?? now
        }
        return undecided
    }

    /// Reads what taking `stores` over needs, on a thread of its own (a take-over is rare, and its read must not
    /// hold up the renewals), and hands it to the decisions: `nil` when it could not, to try again at the next renewal.
    func load(_ stores: Set<UInt16>) {
        let giveUp: @Sendable (String) -> Void = { [inbox, logger] cause in
            logger.error(
                "cannot read the stores to take over; trying again at the next renewal",
                metadata: ["stores": "\(stores.sorted())", "error": "\(cause)"])
            inbox.tookOver(stores, nil)
        }
        do {
            // Not joined: it ends when the decisions have what it read.
            _ = try DedicatedThread(name: "lease-take-over") { [registry, inbox, clock] in
                do {
                    inbox.tookOver(stores, try CoordinatorState.TakeOver.read(stores: stores, from: registry, at: clock.now()))
                } catch {
                    giveUp(registry.describe(error))
                }
            }
        } catch {
            giveUp("\(error)")
        }
    }

    /// Stops renewing; with `release`, gives the leases up (after the visits were saved: a clean stop).
    func stop(release: Bool) {
        wakeUp.lock()
        state.withLock { $0.stopping = true }
        wakeUp.broadcast()
        while !state.withLock({ $0.stopped }) { wakeUp.wait() }
        wakeUp.unlock()
        if release {
            do {
                try leases.release(stores, for: holder)
                logger.info("leases released", metadata: ["stores": "\(stores.map(String.init).joined(separator: ","))"])
            } catch {
                logger.warning(
                    "cannot release the store leases; they run out by themselves", metadata: ["error": "\(registry.describe(error))"])
            }
        }
        leases.close()
    }
}
