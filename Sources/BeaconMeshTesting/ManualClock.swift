import BeaconMeshCore
import BeaconMeshService
import Synchronization

/// A clock that moves only when a test says so: `advance(by:)` sets the time forward and wakes, in deadline order,
/// every sleeper whose deadline has come; nothing else ever wakes one (but cancellation, which throws).
///
/// Time is in whole milliseconds, as everywhere on the wire: a sleep's deadline is rounded up to the next
/// millisecond, and a sleep of zero or less returns at once. `waitForSleepers(_:)` lets a test wait until the
/// service under test is parked on the clock again, so no test needs a real sleep to know the service has caught up.
/// Its monotonic `instant()` moves with it: the real instant it was made at, plus how far it has been advanced.
public final class ManualClock: ServiceClock {
    private struct Sleeper {
        var deadline: Timestamp
        var order: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Waiter {
        /// What the waiter waits for, asked of the sleepers' deadlines.
        var condition: @Sendable ([Timestamp]) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var now: Timestamp
        var sleepers: [Int: Sleeper] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextID = 0

        mutating func takeID() -> Int {
            nextID += 1
            return nextID
        }

        /// Removes and returns the waiters that now see enough sleepers.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Bool, Never>] {
            let deadlines = sleepers.values.map(\.deadline)
            let ready = waiters.filter { $0.value.condition(deadlines) }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    private let state: Mutex<State>
    /// The wall time and the monotonic instant the clock started at.
    private let start: (time: Timestamp, instant: ContinuousClock.Instant)

    /// A clock that reads `now` until advanced (default: 2025-11-22 00:00:00 UTC, a fixed and readable date).
    public init(now: Timestamp = Timestamp(milliseconds: 1_763_769_600_000)) {
        state = Mutex(State(now: now))
        start = (now, .now)
    }

    public func now() -> Timestamp {
        state.withLock { $0.now }
    }

    /// The monotonic instant the clock was made at, moved on by exactly as much as the clock was advanced since.
    public func instant() -> ContinuousClock.Instant {
        start.instant + .milliseconds(now().milliseconds - start.time.milliseconds)
    }

    /// Waits until the clock has been advanced by at least `duration` (rounded up to whole milliseconds).
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        guard milliseconds > 0 else { return }
        let id = state.withLock { $0.takeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>]? in
                    if Task.isCancelled { return nil }
                    let deadline = Timestamp(milliseconds: state.now.milliseconds + milliseconds)
                    state.sleepers[id] = Sleeper(deadline: deadline, order: id, continuation: continuation)
                    return state.satisfiedWaiters()
                }
                guard let ready else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                for waiter in ready { waiter.resume(returning: true) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the time forward by `duration` (whole milliseconds; negative is not allowed) and wakes every sleeper
    /// whose deadline is now or earlier, earliest deadline first (then in the order they went to sleep).
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a manual clock does not go backwards")
        advance(to: Timestamp(milliseconds: now().milliseconds + duration.wholeMilliseconds))
    }

    /// Sets the time to `instant` (if it is later than now) and wakes the sleepers whose deadline has come.
    public func advance(to instant: Timestamp) {
        let due = state.withLock { state -> [Sleeper] in
            if instant > state.now { state.now = instant }
            let now = state.now
            let due = state.sleepers.values.filter { $0.deadline <= now }
                .sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
            for sleeper in due { state.sleepers[sleeper.order] = nil }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// The earliest deadline of a sleeping task, if any: how far `advance(to:)` must go to wake someone.
    public var nextDeadline: Timestamp? {
        state.withLock { $0.sleepers.values.map(\.deadline).min() }
    }

    /// Waits until at least `count` tasks sleep on this clock; `false` if that does not happen within `timeout` of
    /// real time (a safety net for a failing test, not a pace: a passing test never waits for it).
    @discardableResult
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(30)) async -> Bool {
        await withRealTimeout(timeout, otherwise: false) { await self.sleepers(where: { $0.count >= count }) }
    }

    /// Waits until a task sleeps until exactly `deadline` (how a test knows which of a service's waits it is in);
    /// `false` if none does within `timeout` of real time.
    @discardableResult
    public func waitForSleeper(wakingAt deadline: Timestamp, timeout: Duration = .seconds(30)) async -> Bool {
        await withRealTimeout(timeout, otherwise: false) { await self.sleepers(where: { $0.contains(deadline) }) }
    }

    /// `true` once the sleepers' deadlines satisfy `condition`; `false` if the waiting task is cancelled first.
    private func sleepers(where condition: @escaping @Sendable ([Timestamp]) -> Bool) async -> Bool {
        let id = state.withLock { $0.takeID() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let result = state.withLock { state -> Bool? in
                    if condition(state.sleepers.values.map(\.deadline)) { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let result { continuation.resume(returning: result) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: false)
        }
    }
}
