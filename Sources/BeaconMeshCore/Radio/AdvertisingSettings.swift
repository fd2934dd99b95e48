/// How often the node broadcasts its own beacon: the advertising interval range handed to the controller.
///
/// The controller counts in units of 0.625 ms and picks an interval between the minimum and the maximum (and adds
/// 0–10 ms of random delay to each event, as the specification requires). Both must lie between 100 ms and 10.24 s:
/// 100 ms is the shortest interval that Bluetooth 4.x controllers accept for non-connectable advertising, and about
/// the period of a phone's iBeacon, so every controller takes the default.
///
/// The advertisement itself is always non-connectable and non-scannable (`ADV_NONCONN_IND`), on all three primary
/// advertising channels, from the adapter's public address.
public struct AdvertisingSettings: Hashable, Sendable {
    /// 100 ms in 0.625 ms units: the shortest interval allowed here.
    public static let minimumUnits: UInt16 = 0x00A0
    /// 10.24 s in 0.625 ms units: the longest interval allowed here.
    public static let maximumUnits: UInt16 = 0x4000

    /// The shortest advertising interval the controller may use, in units of 0.625 ms.
    public private(set) var minimumIntervalUnits: UInt16
    /// The longest advertising interval the controller may use, in units of 0.625 ms.
    public private(set) var maximumIntervalUnits: UInt16

    /// The default: advertise every 100 ms.
    public init() {
        minimumIntervalUnits = 0x00A0
        maximumIntervalUnits = 0x00A0
    }

    /// Advertise every `interval`; throws unless it lies between 100 ms and 10.24 s.
    public init(interval: Duration) throws(ScanSettingsError) {
        try self.init(minimumInterval: interval, maximumInterval: interval)
    }

    /// Advertise at an interval the controller picks between `minimumInterval` and `maximumInterval`.
    public init(minimumInterval: Duration, maximumInterval: Duration) throws(ScanSettingsError) {
        let minimum = try Self.units(of: minimumInterval, name: "advertising interval")
        let maximum = try Self.units(of: maximumInterval, name: "advertising interval")
        guard minimum <= maximum else {
            throw ScanSettingsError(
                message: "advertising interval minimum \(ScanSettings.spell(minimumInterval)) is longer than its maximum "
                    + ScanSettings.spell(maximumInterval))
        }
        minimumIntervalUnits = minimum
        maximumIntervalUnits = maximum
    }

    /// The HCI `Advertising_Type` of a non-connectable, non-scannable advertisement (`ADV_NONCONN_IND`).
    public static let nonConnectableAdvertisingType: UInt8 = 0x03
    /// Extended advertising event properties for the same thing: "use legacy PDUs", nothing else set.
    public static let legacyNonConnectableEventProperties: UInt16 = 0x0010
    /// All three primary advertising channels (37, 38, 39).
    public static let allChannels: UInt8 = 0x07

    /// `duration` in 0.625 ms units, if within the advertising range (100 ms to 10.24 s).
    private static func units(of duration: Duration, name: String) throws(ScanSettingsError) -> UInt16 {
        try ScanSettings.units(
            of: duration, name: name, minimum: minimumUnits, maximum: maximumUnits, allowed: "between 100ms and 10.24s")
    }
}
