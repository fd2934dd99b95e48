/// An Eddystone-EID fob's key as a person gives it — `members add --eid HEX32[:K]`, or the members CSV's `eid` column
/// `HEX32:K` or `HEX32:K:OFFSET` — before the caller seals it (`MemberFob`): never stored, logged or written as it is.
/// What cannot be read is refused in words that never repeat the key.
public struct EIDCell: Sendable {
    /// The fob's 16-byte identity key.
    public var identityKey: [UInt8]
    /// K, 0–15: a new id every 2^K seconds.
    public var rotationExponent: UInt8
    /// Unix seconds minus the fob's counter, if given.
    public var offset: Int64?

    /// Reads `HEX32`, `HEX32:K` (K 10 when not given) and, with `offsetAllowed`, `HEX32:K:OFFSET`; `nil` otherwise.
    public init?(_ text: String, offsetAllowed: Bool) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...(offsetAllowed ? 3 : 2)).contains(parts.count), parts[0].utf8.count == 32 else { return nil }
        var key: [UInt8] = []
        var digits = parts[0][...]
        while !digits.isEmpty {
            guard let byte = UInt8(digits.prefix(2), radix: 16), digits.prefix(2).allSatisfy(\.isHexDigit) else { return nil }
            key.append(byte)
            digits = digits.dropFirst(2)
        }
        identityKey = key
        if parts.count > 1 {
            guard let exponent = UInt8(parts[1]), exponent <= 15 else { return nil }
            rotationExponent = exponent
        } else {
            rotationExponent = 10
        }
        if parts.count > 2 {
            guard let offset = Int64(parts[2]) else { return nil }
            self.offset = offset
        }
    }

    /// What a person is told when a key cannot be read (the key itself is never repeated).
    public static let expected = "32 hex digits (the fob's 16-byte identity key), then optionally :K, K from 0 to 15"
}
