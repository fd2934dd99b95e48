/// Expands the compressed URL of an Eddystone-URL frame (scheme prefix byte + encoded bytes) into text.
///
/// Scheme prefixes 0–3 stand for `http://www.`, `https://www.`, `http://`, `https://`; bytes 0x00–0x0D stand for
/// `.com/`, `.org/`, … `.gov`; bytes 0x21–0x7E are themselves. An unknown scheme or a reserved byte
/// (0x0E–0x20, 0x7F–0xFF) makes the URL unreadable: `nil`.
public enum EddystoneURL {
    /// URL scheme prefixes, indexed by the scheme byte.
    public static let schemes = ["http://www.", "https://www.", "http://", "https://"]

    /// Top-level-domain expansions, indexed by the encoded byte 0x00–0x0D.
    public static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// The full URL, or `nil` if the scheme byte or an encoded byte is not defined by the Eddystone-URL spec.
    public static func expand(scheme: UInt8, encoded: UnsafeRawBufferPointer) -> String? {
        guard Int(scheme) < schemes.count else { return nil }
        var url = schemes[Int(scheme)]
        for byte in encoded {
            switch byte {
            case 0x00...0x0D:
                url += expansions[Int(byte)]
            case 0x21...0x7E:
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                return nil
            }
        }
        return url
    }

    /// Convenience for tests and tools: expands `encoded` given as bytes.
    public static func expand(scheme: UInt8, encoded: [UInt8]) -> String? {
        encoded.withUnsafeBytes { expand(scheme: scheme, encoded: $0) }
    }
}
