/// A point in time as the wire carries it: whole milliseconds since the Unix epoch.
///
/// Core never reads a clock; callers pass `Timestamp`s in, so every rule is testable with a manual clock.
public struct Timestamp: Hashable, Comparable, Sendable {
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(milliseconds: lhs.milliseconds + rhs.wholeMilliseconds)
    }

    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(milliseconds: lhs.milliseconds - rhs.wholeMilliseconds)
    }

    /// The time from `rhs` to `lhs`.
    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        .milliseconds(lhs.milliseconds - rhs.milliseconds)
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded toward zero.
    @inlinable
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole microseconds, rounded toward zero.
    var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// The duration in seconds as a floating-point number.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
