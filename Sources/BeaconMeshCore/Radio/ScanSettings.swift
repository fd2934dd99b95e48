/// How the radio scans: how often a scan window opens, how long it listens, and whether it asks for scan responses.
///
/// The controller counts both times in units of 0.625 ms; a `Duration` is rounded to the nearest unit. Both must lie
/// between 2.5 ms and 10.24 s (the range every LE controller accepts, legacy and extended commands alike), and the
/// window may not be longer than the interval.
///
/// Defaults, chosen for presence sensing:
/// - **interval 100 ms, window 100 ms**: the window fills the interval, so the radio listens all the time and misses
///   no advertisement (the RSSI filter wants every one); the controller hops to the next advertising channel every
///   100 ms, about one beacon period, so each channel is heard in turn.
/// - **passive**: iBeacon, AltBeacon and Eddystone carry everything in the advertisement itself. Active scanning would
///   only add scan requests on the air (and make the node's own address visible) for scan responses nobody reads.
public struct ScanSettings: Hashable, Sendable {
    /// Whether the scanner only listens or also asks advertisers for their scan responses.
    public enum Mode: Hashable, Sendable {
        /// Only listen (the controller's scan type 0x00).
        case passive
        /// Send scan requests to scannable advertisers and report their scan responses too (scan type 0x01).
        case active

        /// The HCI `LE_Scan_Type` byte.
        public var scanType: UInt8 { self == .passive ? 0x00 : 0x01 }
    }

    /// The smallest interval or window a controller accepts: 4 units, 2.5 ms.
    public static let minimumUnits: UInt16 = 0x0004
    /// The largest interval or window every controller accepts: 0x4000 units, 10.24 s.
    public static let maximumUnits: UInt16 = 0x4000

    /// Time from the start of one scan window to the start of the next, in units of 0.625 ms.
    public private(set) var intervalUnits: UInt16
    /// How long the radio listens in each interval, in units of 0.625 ms; never more than `intervalUnits`.
    public private(set) var windowUnits: UInt16
    /// Passive or active scanning.
    public var mode: Mode

    /// The defaults: interval 100 ms, window 100 ms, passive (see the type's documentation for why).
    public init() {
        intervalUnits = 160
        windowUnits = 160
        mode = .passive
    }

    /// Settings from durations; throws when a time is out of range or the window is longer than the interval.
    public init(interval: Duration = .milliseconds(100), window: Duration = .milliseconds(100), mode: Mode = .passive)
        throws(ScanSettingsError)
    {
        let intervalUnits = try Self.units(of: interval, name: "scan interval")
        let windowUnits = try Self.units(of: window, name: "scan window")
        guard windowUnits <= intervalUnits else {
            throw ScanSettingsError(
                message: "scan window \(Self.spell(window)) is longer than the scan interval \(Self.spell(interval)); "
                    + "make the window at most as long as the interval")
        }
        self.intervalUnits = intervalUnits
        self.windowUnits = windowUnits
        self.mode = mode
    }

    /// The scan interval as a duration.
    public var interval: Duration { .microseconds(Int64(intervalUnits) * 625) }
    /// The scan window as a duration.
    public var window: Duration { .microseconds(Int64(windowUnits) * 625) }

    /// `duration` in 0.625 ms units, rounded to the nearest, if within `minimum...maximum` (by default the scan
    /// range); otherwise an error naming the setting `name` and the allowed range as `allowed` spells it.
    static func units(
        of duration: Duration, name: String, minimum: UInt16 = minimumUnits, maximum: UInt16 = maximumUnits,
        allowed: String = "between 2.5ms and 10.24s"
    ) throws(ScanSettingsError) -> UInt16 {
        let units = (duration.wholeMicroseconds + 312) / 625
        guard units >= Int64(minimum), units <= Int64(maximum) else {
            throw ScanSettingsError(message: "\(name) \(spell(duration)) is out of range: it must be \(allowed)")
        }
        return UInt16(units)
    }

    /// A duration in whole seconds if it is one (`20s`), else in milliseconds with a decimal part only when there is
    /// one (`2.5ms`, `100ms`).
    static func spell(_ duration: Duration) -> String {
        let microseconds = duration.wholeMicroseconds
        if microseconds != 0, microseconds % 1_000_000 == 0 { return "\(microseconds / 1_000_000)s" }
        let whole = microseconds / 1000
        let fraction = abs(microseconds % 1000)
        guard fraction != 0 else { return "\(whole)ms" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)ms"
    }
}

/// Scan settings that a controller would refuse; `description` says which value and what is allowed.
public struct ScanSettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One line naming the setting, its value and the allowed range.
    public var message: String

    /// An error with this message.
    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
