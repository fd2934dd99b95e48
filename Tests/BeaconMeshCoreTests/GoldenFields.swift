// The golden-file spelling of decoded frames (see shared/data/ble/SOURCES.md, "Golden file format").
// Tests/BeaconMeshBLETests/GoldenFields.swift is a copy of this file: keep the two identical.
import BeaconMeshCore
import Foundation

/// One value of a golden record: every number is compared as a `Double` (exact for all golden integers and for the
/// 8.8 fixed-point temperature); `ts` is turned into whole microseconds before it gets here.
enum GoldenValue: Hashable, Sendable, CustomStringConvertible {
    case number(Double)
    case string(String)
    case null

    init(_ value: some BinaryInteger) { self = .number(Double(value)) }

    /// Reads a value produced by `JSONSerialization`; `nil` for arrays, objects and booleans.
    init?(json: Any) {
        switch json {
        case is NSNull: self = .null
        case let text as String: self = .string(text)
        case let number as NSNumber: self = .number(number.doubleValue)
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .number(let value): return value == value.rounded() ? String(Int64(value)) : String(value)
        case .string(let text): return "\"\(text)\""
        case .null: return "null"
        }
    }
}

/// One golden line: key → value.
typealias GoldenRecord = [String: GoldenValue]

enum GoldenFields {
    /// The keys that describe the frame itself (`type` and the beacon fields).
    static func of(_ frame: BeaconFrame) -> GoldenRecord {
        switch frame {
        case .iBeacon(let uuid, let major, let minor, let measuredPower):
            return ["type": .string("ibeacon"), "uuid": .string(uuid.description), "major": GoldenValue(major),
                    "minor": GoldenValue(minor), "tx": GoldenValue(measuredPower)]
        case .altBeacon(let company, let id1, let id2, let id3, let measuredPower, let mfgReserved):
            return ["type": .string("altbeacon"), "company": .string("0x" + HexDigits.string(UInt64(company), digits: 4)),
                    "id1": .string(id1.description), "id2": GoldenValue(id2), "id3": GoldenValue(id3),
                    "tx": GoldenValue(measuredPower), "mfg_reserved": mfgReserved.map { GoldenValue($0) } ?? .null]
        case .eddystoneUID(let namespace, let instance, let txPower):
            return ["type": .string("eddystone_uid"), "tx": GoldenValue(txPower),
                    "namespace": .string(namespace.description), "instance": .string(instance.description)]
        case .eddystoneURL(let url, let txPower):
            return ["type": .string("eddystone_url"), "tx": GoldenValue(txPower), "url": .string(url)]
        case .eddystoneTLM(let version, let battery, let temperature, let advertCount, let uptime):
            return ["type": .string("eddystone_tlm"), "version": GoldenValue(version), "vbatt_mv": GoldenValue(battery),
                    "temp_c": temperature.map { .number($0) } ?? .null, "adv_cnt": GoldenValue(advertCount),
                    "sec_cnt": GoldenValue(uptime)]
        case .eddystoneETLM(let encrypted, let salt, let check):
            // No golden or vector holds an eTLM yet: these key names are our guess at the reference decoder's.
            return ["type": .string("eddystone_etlm"), "version": GoldenValue(1),
                    "etlm": .string(HexDigits.string(encrypted)), "salt": GoldenValue(salt), "mic": GoldenValue(check)]
        case .eddystoneEID(let ephemeralID, let txPower):
            return ["type": .string("eddystone_eid"), "tx": GoldenValue(txPower),
                    "eid": .string(HexDigits.string(ephemeralID, digits: 16))]
        }
    }

    /// The keys that describe the report a frame came in (`src`, `adv_type`, `addr`, `addr_type`, `rssi`).
    static func of(_ header: AdvertisingReport.Header) -> GoldenRecord {
        ["src": .string(header.kind == .legacy ? "adv" : "ext"), "adv_type": GoldenValue(header.eventType),
         "addr": .string(header.address.description), "addr_type": GoldenValue(header.addressType),
         "rssi": GoldenValue(header.rssi)]
    }

    /// A golden JSON object as a record; `ts` (Unix seconds with 6 decimals) becomes whole microseconds.
    static func record(fromJSON object: [String: Any]) -> GoldenRecord? {
        var record: GoldenRecord = [:]
        for (key, json) in object {
            guard var value = GoldenValue(json: json) else { return nil }
            if key == "ts", case .number(let seconds) = value { value = .number((seconds * 1_000_000).rounded()) }
            record[key] = value
        }
        return record
    }

    /// A readable difference between two records, for failure messages.
    static func difference(expected: GoldenRecord, actual: GoldenRecord) -> String {
        let keys = Set(expected.keys).union(actual.keys).sorted()
        return keys.compactMap { key in
            let want = expected[key].map(\.description) ?? "(absent)"
            let got = actual[key].map(\.description) ?? "(absent)"
            return want == got ? nil : "\(key): expected \(want), got \(got)"
        }.joined(separator: "; ")
    }
}
