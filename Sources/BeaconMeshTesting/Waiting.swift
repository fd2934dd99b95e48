/// The tests' two ways of waiting on real time, so that no test sleeps for a guess: polling a condition until it
/// holds (`eventually`), and pacing a real-time feed (`paced`: a scanner's batches, a phone's ranging reports).
/// A check of pure logic needs neither: it runs on `ManualClock`.

/// Polls `check` every `interval` until it returns a value; `nil` once `timeout` has passed.
public func eventually<T>(timeout: Duration, interval: Duration = .milliseconds(10), _ check: () -> T?) async -> T? {
    await eventually(timeout: timeout, interval: interval) { () async -> T? in check() }
}

/// Polls `condition` every `interval` until it holds; `false` once `timeout` has passed.
public func eventually(timeout: Duration, interval: Duration = .milliseconds(10), _ condition: () -> Bool) async -> Bool {
    await eventually(timeout: timeout, interval: interval) { condition() ? true : nil } ?? false
}

/// Polls the asynchronous `condition` every `interval` until it holds; `false` once `timeout` has passed.
public func eventually(timeout: Duration, interval: Duration = .milliseconds(10), _ condition: () async -> Bool) async -> Bool {
    await eventually(timeout: timeout, interval: interval) { await condition() ? true : nil } ?? false
}

/// Polls the asynchronous `check` every `interval` until it gives a value; `nil` once `timeout` has passed.
public func eventually<T>(timeout: Duration, interval: Duration = .milliseconds(10), _ check: () async -> T?) async -> T? {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = await check() { return value }
        if ContinuousClock.now >= deadline { return nil }
        try? await Task.sleep(for: interval)
    }
}

/// Runs `step` `count` times (with 0, 1, …), waiting `interval` after each: a feed at a real pace, as a scanner sends
/// its batches. Throws what a step throws, or `CancellationError` if the task is cancelled while it waits.
public func paced(_ count: Int, every interval: Duration, _ step: (Int) async throws -> Void) async throws {
    for index in 0..<count {
        try await step(index)
        try await Task.sleep(for: interval)
    }
}
