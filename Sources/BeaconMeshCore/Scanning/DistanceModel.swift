#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns a smoothed RSSI into metres with the log-distance path-loss model, and metres into a `Proximity`.
///
/// `distance = 10 ^ ((measuredPower − (rssi + rssiAdjustment)) / (10 · pathLossExponent))`.
public struct DistanceModel: Sendable, Equatable {
    /// How fast the signal fades: 2 in free space, 2.5–4 indoors among shelves and people.
    public var pathLossExponent: Double = 2.0
    /// Added to every reading of this node, to calibrate one antenna against another (dB).
    public var rssiAdjustment: Double = 0
    /// The RSSI at 1 m to assume when the frame carries none (dBm); `nil` means "no estimate then".
    public var defaultMeasuredPower: Int? = -59
    /// Closer than this is `immediate` (metres).
    public var immediateBelow: Double = 0.5
    /// Closer than this (and not immediate) is `near`; anything farther is `far` (metres).
    public var nearBelow: Double = 3.0

    public init() {}

    /// The measured power to use: the frame's, else the configured default.
    @inlinable
    public func measuredPower(fromFrame framePower: Int?) -> Int? {
        framePower ?? defaultMeasuredPower
    }

    /// Metres for `rssi` given the power at 1 m; `nil` without a power or for a non-finite reading.
    public func distance(rssi: Double, measuredPower: Int?) -> Double? {
        guard let measuredPower, rssi.isFinite, rssi < 0 else { return nil }
        let exponent = (Double(measuredPower) - (rssi + rssiAdjustment)) / (10 * pathLossExponent)
        return pow(10, exponent)
    }

    /// The bucket for a distance; `.unknown` without one.
    public func proximity(distance: Double?) -> Proximity {
        guard let distance else { return .unknown }
        if distance < immediateBelow { return .immediate }
        if distance < nearBelow { return .near }
        return .far
    }
}
