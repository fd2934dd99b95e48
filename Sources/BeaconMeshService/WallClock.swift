import BeaconMeshCore

#if canImport(Glibc)
    import Glibc
#endif

/// The real time, for services: Core itself never reads a clock.
public struct WallClock: ServiceClock {
    public init() {}

    /// Now, in whole milliseconds since the Unix epoch.
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// Now, in whole milliseconds since the Unix epoch.
    public func now() -> Timestamp { Self.now() }

    /// Now on the system's monotonic clock (`ContinuousClock`), which also counts time suspended.
    public func instant() -> ContinuousClock.Instant { .now }

    /// Sleeps on the system's clock (`Task.sleep`).
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
