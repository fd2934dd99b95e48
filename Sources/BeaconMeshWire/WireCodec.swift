import BeaconMeshCore

/// The contract's JSON payloads, both ways: Core values in, UTF-8 JSON bytes out, and back.
///
/// Decoding never crashes: anything that is not the contract's shape comes back as a `WireError`.
public enum WireCodec {
    /// No contract payload comes near this size; larger ones are refused before parsing.
    public static let maximumPayloadBytes = 256 * 1024

    /// Parses `bytes` into a JSON object with `"v": 1`.
    static func parseVersion1(_ bytes: [UInt8]) throws(WireError) -> JSONReader {
        guard bytes.count <= maximumPayloadBytes else { throw .tooLarge(bytes: bytes.count) }
        let reader = try JSONReader(try JSONCBridge.parse(bytes))
        try reader.requireVersion1()
        return reader
    }

    /// Prints a JSON value as compact UTF-8.
    public static func serialize(_ value: JSONValue) -> [UInt8] { JSONCBridge.serialize(value) }

    /// Parses any JSON text (for tools and tests).
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> JSONValue {
        guard bytes.count <= maximumPayloadBytes else { throw .tooLarge(bytes: bytes.count) }
        return try JSONCBridge.parse(bytes)
    }
}
