import ArgumentParser
import BeaconMeshCore
import Logging

/// A typed value of a scanner setting: read from a flag by ArgumentParser (`ExpressibleByArgument`) and from the
/// config file by the same `init?(argument:)`, with the words that say what a good value looks like.
public protocol ScannerSettingValue: ExpressibleByArgument, Sendable {
    /// What a bad value is told, after the setting and the value: "must be a positive number or max".
    static var expectation: String { get }
}

extension UInt16: ScannerSettingValue {
    public static var expectation: String { "must be a whole number from \(min) to \(max)" }
}

extension Int8: ScannerSettingValue {
    public static var expectation: String { "must be a whole number from \(min) to \(max)" }
}

extension Int: ScannerSettingValue {
    public static var expectation: String { "must be a whole number" }
}

extension Double: ScannerSettingValue {
    public static var expectation: String { "must be a number" }
}

extension String: ScannerSettingValue {
    public static var expectation: String { "must be text" }
}

extension BeaconUUID: ExpressibleByArgument, ScannerSettingValue {
    public init?(argument: String) { self.init(argument) }
    public static var expectation: String { "is not a UUID (8-4-4-4-12 hex digits)" }
}

extension AdvertSource: ExpressibleByArgument, ScannerSettingValue {
    public init?(argument: String) { self.init(argument) }
    public static var expectation: String { "must be hci0 (or another hciN), btsnoop:PATH or sim" }
    public var defaultValueDescription: String { description }
}

extension ReplaySpeed: ExpressibleByArgument, ScannerSettingValue {
    public init?(argument: String) { self.init(argument) }
    public static var expectation: String { "must be a positive number or max" }
    public var defaultValueDescription: String { description }
}

extension Logger.Level: @retroactive ExpressibleByArgument, ScannerSettingValue {
    public static var expectation: String { "must be trace, debug, info, notice, warning, error or critical" }
    /// The help already names the levels.
    public static var allValueStrings: [String] { [] }
}

/// A node id: 1-32 of a-z, 0-9 and - (`NodeAddress`'s rule).
public struct NodeName: ScannerSettingValue, Hashable {
    public var id: String

    public init?(argument: String) {
        guard NodeAddress.isValidNodeID(argument) else { return nil }
        id = argument
    }

    public static var expectation: String { "must be 1-32 of a-z, 0-9 and -" }
    public var defaultValueDescription: String { id }
}

/// A duration longer than zero: `250ms`, `5s`, `1m`.
public struct PositiveDuration: ScannerSettingValue, Hashable {
    public var duration: Duration

    public init?(argument: String) {
        guard let duration = DurationText.parse(argument), duration > .zero else { return nil }
        self.duration = duration
    }

    public static var expectation: String { "must be a duration such as 250ms, 5s or 1m" }
}

/// A duration of zero or more: `0s`, `60s`.
public struct NonNegativeDuration: ScannerSettingValue, Hashable {
    public var duration: Duration

    public init?(argument: String) {
        guard let duration = DurationText.parse(argument) else { return nil }
        self.duration = duration
    }

    public static var expectation: String { "must be a duration such as 0s or 60s" }
}

/// The QoS of sighting batches: 1 (at least once) or 0.
public enum SightingsQoS: Int, ScannerSettingValue, CaseIterable {
    case atMostOnce = 0
    case atLeastOnce = 1

    public init?(argument: String) {
        guard let number = Int(argument), let qos = SightingsQoS(rawValue: number) else { return nil }
        self = qos
    }

    public static var expectation: String { "must be 0 or 1" }
    public var defaultValueDescription: String { String(rawValue) }
    /// The help already names both.
    public static var allValueStrings: [String] { [] }
}

/// Departments in walking order, separated by commas: `10,20,30` (spaces allowed around them).
public struct DepartmentRoute: ScannerSettingValue, Hashable {
    public var departments: [UInt16]

    public init?(argument: String) {
        var departments: [UInt16] = []
        for part in argument.split(separator: ",", omittingEmptySubsequences: false) {
            guard let department = UInt16(part.filter { !$0.isWhitespace }) else { return nil }
            departments.append(department)
        }
        guard !departments.isEmpty else { return nil }
        self.departments = departments
    }

    public static var expectation: String { "must list department numbers, e.g. 10,20,30" }
}
