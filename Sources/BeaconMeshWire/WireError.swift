/// Why a payload was refused: the reason a receiver counts and logs (once) before dropping it.
public enum WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not JSON at all (or nested absurdly deep).
    case invalidJSON(String)
    /// Larger than any payload of the contract.
    case tooLarge(bytes: Int)
    /// `v` missing or not a version this build reads.
    case unknownVersion(String)
    /// A field is missing or has the wrong type.
    case wrongType(field: String, expected: String)
    /// A field has the right type but a value no real device produces.
    case absurdValue(field: String, value: String)

    /// A short stable name for counting drops per reason.
    public var reason: String {
        switch self {
        case .invalidJSON: return "invalid-json"
        case .tooLarge: return "too-large"
        case .unknownVersion: return "unknown-version"
        case .wrongType: return "wrong-type"
        case .absurdValue: return "absurd-value"
        }
    }

    public var description: String {
        switch self {
        case .invalidJSON(let detail): return "not valid JSON (\(detail))"
        case .tooLarge(let bytes): return "payload of \(bytes) bytes is larger than the \(WireCodec.maximumPayloadBytes) allowed"
        case .unknownVersion(let found): return "unknown payload version \(found) (this build reads v1)"
        case .wrongType(let field, let expected): return "field '\(field)' must be \(expected)"
        case .absurdValue(let field, let value): return "field '\(field)' has an impossible value \(value)"
        }
    }
}
