import BeaconMeshCore
import BeaconMeshRegistry
import Synchronization

/// What the coordinator's decision loop takes next: decoded messages in arrival order, ticks, registry changes, lease
/// renewals and take-overs.
///
/// Message chunks are bounded (`push` waits while `capacity` chunks wait, so a backlog stays in the MQTT inbox and
/// the broker, not here); ticks, member changes and lease renewals are coalesced (a tick requested twice before it
/// is taken is one tick, a member's newer read or a newer renewal replaces an older one), and take-overs are one per
/// store at most (the decisions ask once), so they need no bound. One consumer, one chunk producer.
final class DecisionInbox: Sendable {
    /// One thing to decide.
    enum Item: Sendable {
        /// Decoded messages, in arrival order.
        case inputs([CoordinatorInput])
        /// Time to tick.
        case tick
        /// Members as others (the `members` command, other coordinators) left them.
        case membersChanged(MemberChanges)
        /// A lease renewal's answer: the stores held, with since when, and when (monotonic) it was sent.
        case leasesRenewed([UInt16: LeaseGrant], sentAt: ContinuousClock.Instant)
        /// What the registry holds of stores being taken over (`nil`: it could not be read).
        case tookOver(Set<UInt16>, CoordinatorState.TakeOver?)
    }

    private struct State: ~Copyable {
        var chunks: [[CoordinatorInput]] = []
        var head = 0
        var tickDue = false
        /// Member changes, merged while they wait.
        var memberChanges = MemberChanges()
        var renewal: (held: [UInt16: LeaseGrant], sentAt: ContinuousClock.Instant)?
        var takeOvers: [(stores: Set<UInt16>, loaded: CoordinatorState.TakeOver?)] = []
        var consumer: CheckedContinuation<Item?, Never>?
        var producer: CheckedContinuation<Void, Never>?
        var closed = false

        var waitingChunks: Int { chunks.count - head }

        /// The next item by priority: lease renewals and take-overs (fencing and hand-over wait for nothing), registry
        /// changes, then a tick, then the oldest chunk.
        mutating func take() -> Item? {
            if let renewal {
                self.renewal = nil
                return .leasesRenewed(renewal.held, sentAt: renewal.sentAt)
            }
            if !takeOvers.isEmpty {
                let first = takeOvers.removeFirst()
                return .tookOver(first.stores, first.loaded)
            }
            if !memberChanges.isEmpty {
                defer { memberChanges = MemberChanges() }
                return .membersChanged(memberChanges)
            }
            if tickDue {
                tickDue = false
                return .tick
            }
            guard waitingChunks > 0 else { return nil }
            let chunk = chunks[head]
            chunks[head] = []
            head += 1
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            }
            return .inputs(chunk)
        }
    }

    private let state = Mutex(State())
    /// How many chunks may wait.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds a chunk of decoded messages, waiting while `capacity` chunks wait; does nothing once closed.
    func push(_ inputs: [CoordinatorInput]) async {
        while true {
            enum Step {
                case deliver(CheckedContinuation<Item?, Never>)
                case stored, full
            }
            let step: Step = state.withLock { state in
                if state.closed { return .stored }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .deliver(consumer)
                }
                if state.waitingChunks < capacity {
                    state.chunks.append(inputs)
                    return .stored
                }
                return .full
            }
            switch step {
            case .deliver(let consumer):
                consumer.resume(returning: .inputs(inputs))
                return
            case .stored:
                return
            case .full:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let resumeNow = state.withLock { state in
                            if state.closed || Task.isCancelled || state.waitingChunks < capacity { return true }
                            state.producer = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                } onCancel: {
                    wakeProducer()
                }
                if Task.isCancelled { return }
            }
        }
    }

    /// Asks for a tick (one tick however often asked before it is taken).
    func requestTick() {
        deliver { $0.tickDue = true }
    }

    /// Hands over a lease renewal's answer (replacing an older one not yet taken).
    func leasesRenewed(_ held: [UInt16: LeaseGrant], sentAt: ContinuousClock.Instant) {
        deliver { $0.renewal = (held, sentAt) }
    }

    /// Hands over what a take-over of `stores` loaded.
    func tookOver(_ stores: Set<UInt16>, _ loaded: CoordinatorState.TakeOver?) {
        deliver { $0.takeOvers.append((stores, loaded)) }
    }

    /// Hands over members as last read (merged over changes not yet taken).
    func membersChanged(_ changes: MemberChanges) {
        guard !changes.isEmpty else { return }
        deliver { $0.memberChanges.merge(changes) }
    }

    private func deliver(_ change: (inout State) -> Void) {
        let ready: (CheckedContinuation<Item?, Never>, Item)? = state.withLock { state in
            guard !state.closed else { return nil }
            change(&state)
            guard let consumer = state.consumer, let item = state.take() else { return nil }
            state.consumer = nil
            return (consumer, item)
        }
        if let (consumer, item) = ready { consumer.resume(returning: item) }
    }

    /// The next item; `nil` once closed, or when the waiting task is cancelled.
    func next() async -> Item? {
        enum Step {
            case item(Item, wakeProducer: CheckedContinuation<Void, Never>?)
            case finished, wait
        }
        let step: Step = state.withLock { state in
            if let item = state.take() {
                let producer = state.producer
                state.producer = nil
                return .item(item, wakeProducer: producer)
            }
            return state.closed ? .finished : .wait
        }
        switch step {
        case .item(let item, let producer):
            producer?.resume()
            return item
        case .finished:
            return nil
        case .wait:
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Item?, Never>) in
                    enum Now {
                        case resume(Item?, CheckedContinuation<Void, Never>?)
                        case wait
                    }
                    let now: Now = state.withLock { state in
                        if state.closed || Task.isCancelled { return .resume(nil, nil) }
                        if let item = state.take() {
                            let producer = state.producer
                            state.producer = nil
                            return .resume(item, producer)
                        }
                        state.consumer = continuation
                        return .wait
                    }
                    if case .resume(let item, let producer) = now {
                        producer?.resume()
                        continuation.resume(returning: item)
                    }
                }
            } onCancel: {
                let consumer = state.withLock { state in
                    defer { state.consumer = nil }
                    return state.consumer
                }
                consumer?.resume(returning: nil)
            }
        }
    }

    /// Ends the inbox: a waiting consumer gets `nil`, a waiting producer returns; later calls do nothing.
    func close() {
        let (consumer, producer) = state.withLock { state in
            state.closed = true
            defer {
                state.consumer = nil
                state.producer = nil
            }
            return (state.consumer, state.producer)
        }
        consumer?.resume(returning: nil)
        producer?.resume()
    }

    private func wakeProducer() {
        let producer = state.withLock { state in
            defer { state.producer = nil }
            return state.producer
        }
        producer?.resume()
    }
}
