// The golden-file spelling of decoded frames (see shared/data/ble/SOURCES.md, "Golden file format"): the generic
// part. Spelling Core's types (`BeaconFrame`, `AdvertisingReport.Header`) as records is left to the test targets,
// because this module does not depend on BeaconMeshCore.
import Foundation

/// One value of a golden record: every number is compared as a `Double` (exact for all golden integers and for the
/// 8.8 fixed-point temperature); `ts` is turned into whole microseconds before it gets here.
public enum GoldenValue: Hashable, Sendable, CustomStringConvertible {
    /// A number (integers included).
    case number(Double)
    /// A string, e.g. a UUID or an address.
    case string(String)
    /// JSON `null`: a field the frame does not have.
    case null

    /// An integer field, as a number.
    public init(_ value: some BinaryInteger) { self = .number(Double(value)) }

    /// Reads a value produced by `JSONSerialization`; `nil` for arrays, objects and booleans.
    public init?(json: Any) {
        switch json {
        case is NSNull: self = .null
        case let text as String: self = .string(text)
        case let number as NSNumber: self = .number(number.doubleValue)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .number(let value): return value == value.rounded() ? String(Int64(value)) : String(value)
        case .string(let text): return "\"\(text)\""
        case .null: return "null"
        }
    }
}

/// One golden line: key → value.
public typealias GoldenRecord = [String: GoldenValue]

/// Reading and comparing golden records; the test targets add the spelling of decoded frames and report headers.
public enum GoldenFields {
    /// A golden JSON object as a record; `ts` (Unix seconds with 6 decimals) becomes whole microseconds.
    public static func record(fromJSON object: [String: Any]) -> GoldenRecord? {
        var record: GoldenRecord = [:]
        for (key, json) in object {
            guard var value = GoldenValue(json: json) else { return nil }
            if key == "ts", case .number(let seconds) = value { value = .number((seconds * 1_000_000).rounded()) }
            record[key] = value
        }
        return record
    }

    /// A readable difference between two records, for failure messages.
    public static func difference(expected: GoldenRecord, actual: GoldenRecord) -> String {
        let keys = Set(expected.keys).union(actual.keys).sorted()
        return keys.compactMap { key in
            let want = expected[key].map(\.description) ?? "(absent)"
            let got = actual[key].map(\.description) ?? "(absent)"
            return want == got ? nil : "\(key): expected \(want), got \(got)"
        }.joined(separator: "; ")
    }
}
