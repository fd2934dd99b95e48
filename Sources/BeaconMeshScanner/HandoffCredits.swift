import Synchronization

/// Backpressure between a producer that may outrun its consumer and that consumer: the producer takes a credit for
/// each chunk it hands over and waits while none is left; the consumer gives credits back when it is ready for more.
///
/// So at most `limit` chunks are between the two at any time, however fast the producer can go. `close()` ends
/// every wait (and all future ones) with `false`, for shutdown.
final class HandoffCredits: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Bool, Never>] = []
        var closed = false
    }

    private let state: Mutex<State>

    /// Credits for `limit` chunks (at least 1).
    init(limit: Int) {
        state = Mutex(State(available: max(1, limit)))
    }

    /// Takes one credit, waiting until one is given back if none is left; `false` once closed (hand nothing over).
    func acquire() async -> Bool {
        await withCheckedContinuation { continuation in
            let immediate = state.withLock { state -> Bool? in
                if state.closed { return false }
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Takes one credit if one is left, without waiting (for a producer that cannot wait, such as the radio's reader
    /// thread); `false` if none is left or once closed.
    func tryAcquire() -> Bool {
        state.withLock { state in
            guard !state.closed, state.available > 0 else { return false }
            state.available -= 1
            return true
        }
    }

    /// Gives `count` credits back, waking as many waiting producers.
    func release(_ count: Int = 1) {
        guard count > 0 else { return }
        let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            let woken = Array(state.waiters.prefix(count))
            state.waiters.removeFirst(woken.count)
            state.available += count - woken.count
            return woken
        }
        for waiter in woken { waiter.resume(returning: true) }
    }

    /// Ends every wait with `false`; later `acquire` calls return `false` at once.
    func close() {
        let woken = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in woken { waiter.resume(returning: false) }
    }
}
