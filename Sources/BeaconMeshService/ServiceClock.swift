import BeaconMeshCore

/// Where a service reads the time and waits: `WallClock` in the programs, `BeaconMeshTesting.ManualClock` in tests.
///
/// Both readings are in the wire's terms (whole milliseconds since the Unix epoch), so a manual clock moves every
/// timestamp a service writes as well as its timers.
public protocol ServiceClock: Sendable {
    /// Now, in whole milliseconds since the Unix epoch.
    func now() -> Timestamp

    /// Returns once `duration` has passed on this clock; throws `CancellationError` if the task is cancelled first.
    func sleep(for duration: Duration) async throws
}
