import BeaconMeshCore

/// The contract's JSON payloads, both ways: Core values in, UTF-8 JSON bytes out, and back.
///
/// Decoding never crashes: anything that is not the contract's shape comes back as a `WireError`. Every payload is
/// read by json-c through `JSONReader` and written by `JSONStreamWriter`.
public enum WireCodec {
    /// No contract payload comes near this size; larger ones are refused before parsing.
    public static let maximumPayloadBytes = 256 * 1024

    /// Prints a JSON value as compact UTF-8.
    public static func serialize(_ value: JSONValue) -> [UInt8] {
        var writer = JSONStreamWriter()
        writer.value(value)
        return writer.finish()
    }

    /// Parses any JSON text (for tools and tests).
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> JSONValue {
        guard bytes.count <= maximumPayloadBytes else { throw .tooLarge(bytes: bytes.count) }
        return try JSONCBridge.parse(bytes)
    }

    /// Writes one payload object whose members `body` writes; `capacity` is a guess at its size in bytes.
    static func payload(capacity: Int = 256, _ body: (inout JSONStreamWriter) -> Void) -> [UInt8] {
        var writer = JSONStreamWriter(capacity: capacity)
        writer.object(body)
        return writer.finish()
    }
}
