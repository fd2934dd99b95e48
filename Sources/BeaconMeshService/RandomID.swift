import BeaconMeshCore

/// Random identifiers: a scanner's `boot`, event and offer ids.
public enum RandomID {
    /// `hexDigits` random lower-case hex digits (at most 16).
    public static func make(hexDigits: Int = 8) -> String {
        HexDigits.string(UInt64.random(in: .min ... .max), digits: min(hexDigits, 16))
    }
}
