import BeaconMeshCore

/// Where a service reads the time and waits: `WallClock` in the programs, `BeaconMeshTesting.ManualClock` in tests.
///
/// `now()` and `sleep(for:)` are in the wire's terms (whole milliseconds since the Unix epoch), so a manual clock moves
/// every timestamp a service writes as well as its timers; `instant()` is the monotonic time a service measures
/// intervals with that must not follow the wall clock (a store lease's validity), moved by a manual clock too.
public protocol ServiceClock: Sendable {
    /// Now, in whole milliseconds since the Unix epoch.
    func now() -> Timestamp

    /// Now on a monotonic clock: never set back or forward with the wall clock (`ContinuousClock` in the programs).
    func instant() -> ContinuousClock.Instant

    /// Returns once `duration` has passed on this clock; throws `CancellationError` if the task is cancelled first.
    func sleep(for duration: Duration) async throws
}
