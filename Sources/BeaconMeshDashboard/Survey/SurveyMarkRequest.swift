import BeaconMeshCore
import BeaconMeshWire

/// A survey mark as the survey page posts it: `{"beacon":"ibeacon:…","department":10}`, `"department":null` between
/// departments, `{"beacon":"…","stop":true}` at the end (a `department` beside `stop` is not needed, and not used).
/// The mark's time is the dashboard's, never the browser's.
///
/// A request that is not such an object, names no beacon key, or a department the dashboard does not know of the
/// store, is refused with one line saying so (the page shows it to the surveyor as it is).
enum SurveyMarkRequest {
    /// Why a request is refused: one line for the surveyor.
    struct Refusal: Error, CustomStringConvertible {
        let description: String

        init(_ description: String) {
            self.description = description
        }
    }

    /// The mark of store `store` that `bytes` ask for, made `at`; `departments` are those the dashboard knows of the
    /// store (a mark may name only one of them).
    static func mark(_ bytes: [UInt8], store: UInt16, departments: Set<UInt16>, at now: Timestamp) throws(Refusal) -> SurveyMark {
        let body: JSONValue
        do throws(WireError) {
            body = try WireCodec.parse(bytes)
        } catch {
            throw Refusal("the mark is not JSON: \(error)")
        }
        guard case .object = body else { throw Refusal(#"the mark must be a JSON object such as {"beacon":"ibeacon:…","department":10}"#) }
        guard case .string(let text)? = body["beacon"] else { throw Refusal("'beacon' must be the carried beacon's key, a string") }
        guard let beacon = BeaconKey(text.lowercased()) else {
            throw Refusal("'\(shown(text))' is not a beacon key (ibeacon:<uuid>:<major>:<minor>, altbeacon:… or eddystone:…)")
        }
        let stop: Bool
        switch body["stop"] {
        case nil, .null?: stop = false
        case .bool(let value)?: stop = value
        default: throw Refusal("'stop' must be true or false")
        }
        if stop { return .stop(beacon, at: now) }
        switch body["department"] {
        case nil:
            throw Refusal("'department' is missing: a department number, or null between departments")
        case .null?:
            return SurveyMark(beacon: beacon, department: nil, at: now)
        case .int(let number)?:
            guard let department = UInt16(exactly: number) else { throw Refusal("department \(number) is not a number from 0 to 65535") }
            guard departments.contains(department) else {
                let known = departments.sorted().map(String.init).joined(separator: ", ")
                throw Refusal(
                    known.isEmpty
                        ? "department \(department) is unknown: no department of store \(store) has been heard yet"
                        : "department \(department) is not a department of store \(store) (it has \(known))")
            }
            return SurveyMark(beacon: beacon, department: department, at: now)
        default:
            throw Refusal("'department' must be a department number, or null between departments")
        }
    }

    /// `text` as one short line: at most 80 characters, control characters as `?`.
    private static func shown(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(80).map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }
}
