import Dispatch
import Synchronization

/// The one way to hand work from threads and tasks to one consuming task: contents behind a lock, a consumer that
/// suspends until there is something to take, and producers that put without waiting or wait for room (suspending
/// their task, or blocking their thread).
///
/// The contents decide what is held and in which order — a queue, the latest value per key, items by priority —
/// through the closures producers and the consumer pass in; the mailbox does only the waiting and the waking.
/// Back-pressure is the contents' `isFull`. `close()` ends every wait: the consumer takes what is left, then `nil`;
/// producers get `false`. No lock is held while a waiter is resumed, and one task consumes.
public final class Mailbox<Contents: MailboxContents>: Sendable {
    @usableFromInline
    struct State: ~Copyable {
        @usableFromInline
        var contents: Contents
        /// Counts puts, so that a consumer about to suspend sees whether something came in since it last looked.
        @usableFromInline
        var puts: UInt64 = 0
        @usableFromInline
        var consumer: CheckedContinuation<Void, Never>?
        @usableFromInline
        var suspendedProducers: [CheckedContinuation<Void, Never>] = []
        @usableFromInline
        var blockedProducers = 0
        @usableFromInline
        var closed = false

        @inlinable
        init(contents: consuming Contents) {
            self.contents = contents
        }

        /// The waiting consumer, taken out to be resumed after a put.
        @inlinable
        mutating func consumerAfterPut() -> CheckedContinuation<Void, Never>? {
            puts &+= 1
            defer { consumer = nil }
            return consumer
        }

        /// The waiting producers to wake: all of them when `everyone`, else those the contents now have room for.
        @inlinable
        mutating func producersToWake(everyone: Bool = false) -> ProducerWake {
            guard !suspendedProducers.isEmpty || blockedProducers > 0 else { return ProducerWake() }
            guard everyone || contents.hasRoomForWaitingProducers else { return ProducerWake() }
            defer {
                suspendedProducers = []
                blockedProducers = 0
            }
            return ProducerWake(suspended: suspendedProducers, blocked: blockedProducers)
        }
    }

    /// Producers to resume once the lock is released.
    @usableFromInline
    struct ProducerWake: Sendable {
        @usableFromInline
        var suspended: [CheckedContinuation<Void, Never>] = []
        @usableFromInline
        var blocked = 0

        @inlinable
        init(suspended: [CheckedContinuation<Void, Never>] = [], blocked: Int = 0) {
            self.suspended = suspended
            self.blocked = blocked
        }
    }

    @usableFromInline
    enum PutStep: Sendable {
        case put(wakeConsumer: CheckedContinuation<Void, Never>?)
        case full, closed
    }

    @usableFromInline
    enum TakeStep<Taken: Sendable>: Sendable {
        case taken(Taken, ProducerWake)
        case finished
        case wait(afterPuts: UInt64)
    }

    @usableFromInline
    let state: Mutex<State>
    /// Where blocked producer threads wait for room: signalled once per blocked producer to wake.
    @usableFromInline
    let room = DispatchSemaphore(value: 0)

    /// A mailbox holding `contents` to begin with (empty ones, usually).
    @inlinable
    public init(_ contents: Contents) {
        state = Mutex(State(contents: contents))
    }

    // MARK: Producers

    /// Changes the contents at once, whatever their room (for producers bounded by something else: ticks, the latest
    /// value per key); `false`, and no change, once closed.
    @discardableResult
    @inlinable
    public func put(_ change: (inout Contents) -> Void) -> Bool {
        let step = state.withLock { state -> PutStep in
            guard !state.closed else { return .closed }
            change(&state.contents)
            return .put(wakeConsumer: state.consumerAfterPut())
        }
        return finish(step)
    }

    /// Changes the contents if they are not full, without waiting (for a producer that cannot wait and keeps what it
    /// could not hand over); `false`, and no change, when full or closed.
    @inlinable
    public func putIfRoom(_ change: (inout Contents) -> Void) -> Bool {
        let step = state.withLock { state -> PutStep in
            guard !state.closed else { return .closed }
            guard !state.contents.isFull else { return .full }
            change(&state.contents)
            return .put(wakeConsumer: state.consumerAfterPut())
        }
        return finish(step)
    }

    /// Changes the contents once they are not full, suspending the task until then; `false`, and no change, once
    /// closed or when the task is cancelled while it waits.
    @inlinable
    public func putWhenRoom(_ change: (inout Contents) -> Void) async -> Bool {
        while true {
            let step = state.withLock { state -> PutStep in
                guard !state.closed else { return .closed }
                guard !state.contents.isFull else { return .full }
                change(&state.contents)
                return .put(wakeConsumer: state.consumerAfterPut())
            }
            guard case .full = step else { return finish(step) }
            if Task.isCancelled { return false }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let suspended = state.withLock { state in
                        guard !state.closed, !Task.isCancelled, state.contents.isFull else { return false }
                        state.suspendedProducers.append(continuation)
                        return true
                    }
                    if !suspended { continuation.resume() }
                }
            } onCancel: {
                // Wakes every suspended producer; those not cancelled find the contents still full and wait again.
                wake(state.withLock { $0.producersToWake(everyone: true) })
            }
        }
    }

    /// Changes the contents once they are not full, blocking the calling thread until then (for a thread of its own,
    /// such as a network loop: while it waits it reads no more, and the sender is pushed back); `false`, and no change,
    /// once closed. Never call it from a task: it would hold one of the concurrency pool's threads.
    @inlinable
    public func putWhenRoomBlocking(_ change: (inout Contents) -> Void) -> Bool {
        while true {
            let step = state.withLock { state -> PutStep in
                guard !state.closed else { return .closed }
                guard !state.contents.isFull else {
                    state.blockedProducers += 1
                    return .full
                }
                change(&state.contents)
                return .put(wakeConsumer: state.consumerAfterPut())
            }
            guard case .full = step else { return finish(step) }
            room.wait()
        }
    }

    @inlinable
    func finish(_ step: PutStep) -> Bool {
        switch step {
        case .put(let consumer):
            consumer?.resume()
            return true
        case .full, .closed:
            return false
        }
    }

    // MARK: The consumer

    /// What `take` takes from the contents, suspending until it takes something; `nil` once the mailbox is closed and
    /// `take` finds nothing more, or when the task is cancelled while it waits. `take` returns `nil` to mean "nothing
    /// for me yet".
    @inlinable
    public func take<Taken: Sendable>(_ take: (inout Contents) -> Taken?) async -> Taken? {
        while true {
            let step = state.withLock { state -> TakeStep<Taken> in
                if let taken = take(&state.contents) { return .taken(taken, state.producersToWake()) }
                return state.closed ? .finished : .wait(afterPuts: state.puts)
            }
            switch step {
            case .taken(let taken, let producers):
                wake(producers)
                return taken
            case .finished:
                return nil
            case .wait(let seen):
                if Task.isCancelled { return nil }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let suspended = state.withLock { state in
                            guard !state.closed, !Task.isCancelled, state.puts == seen else { return false }
                            precondition(state.consumer == nil, "a mailbox has one consumer")
                            state.consumer = continuation
                            return true
                        }
                        if !suspended { continuation.resume() }
                    }
                } onCancel: {
                    let consumer = state.withLock { state in
                        defer { state.consumer = nil }
                        return state.consumer
                    }
                    consumer?.resume()
                }
                if Task.isCancelled { return nil }
            }
        }
    }

    /// What `take` takes from the contents now, without waiting (`nil`: nothing).
    @inlinable
    public func takeNow<Taken: Sendable>(_ take: (inout Contents) -> Taken?) -> Taken? {
        let taken = state.withLock { state -> (Taken, ProducerWake)? in
            guard let taken = take(&state.contents) else { return nil }
            return (taken, state.producersToWake())
        }
        guard let (value, producers) = taken else { return nil }
        wake(producers)
        return value
    }

    /// Changes the contents from the consumer's side without taking anything (giving back room it held), and wakes
    /// the producers waiting for the room that made.
    @inlinable
    public func update(_ change: (inout Contents) -> Void) {
        wake(
            state.withLock { state in
                change(&state.contents)
                return state.producersToWake()
            })
    }

    /// Ends the mailbox: the consumer takes what is left, then `nil`; waiting producers give up, and later puts do
    /// nothing. Calling it again does nothing.
    @inlinable
    public func close() {
        let (consumer, producers) = state.withLock { state in
            state.closed = true
            defer { state.consumer = nil }
            return (state.consumer, state.producersToWake(everyone: true))
        }
        consumer?.resume()
        wake(producers)
    }

    /// How many producers wait for room now (for a health figure, or a test that needs one waiting before it takes).
    public var producersWaiting: Int {
        state.withLock { $0.suspendedProducers.count + $0.blockedProducers }
    }

    /// Whether the consumer is suspended in `take`, waiting for a put (for a test that needs it waiting).
    public var consumerWaiting: Bool {
        state.withLock { $0.consumer != nil }
    }

    @inlinable
    func wake(_ producers: ProducerWake) {
        for producer in producers.suspended { producer.resume() }
        for _ in 0..<producers.blocked { room.signal() }
    }
}

/// What a `Mailbox` holds between its producers and its consumer, and the one rule the mailbox needs of it: when a
/// producer that waits for room must wait.
public protocol MailboxContents: Sendable {
    /// Whether a producer that waits for room (`putWhenRoom`, `putWhenRoomBlocking`) must wait now, and one that will
    /// not wait (`putIfRoom`) is refused.
    var isFull: Bool { get }
    /// Whether producers waiting for room are woken now, checked after each take; by default whenever the contents
    /// are not full. A queue may wait until more is free, so that its producer is not woken for every item taken.
    var hasRoomForWaitingProducers: Bool { get }
}

extension MailboxContents {
    public var hasRoomForWaitingProducers: Bool { !isFull }
}
