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
    ///
    /// The text is written straight into the returned array's storage: a sighting batch of thousands of beacons is
    /// not held twice while it is copied. A payload that outgrows the guess is copied out of the writer's buffer.
    static func payload(capacity: Int = 256, _ body: (inout JSONStreamWriter) -> Void) -> [UInt8] {
        document(capacity: capacity) { writer in writer.object(body) }
    }

    /// Writes one JSON document (an object, an array…) that `body` writes from its root.
    static func document(capacity: Int = 256, _ body: (inout JSONStreamWriter) -> Void) -> [UInt8] {
        var outgrown: [UInt8]?
        let bytes = [UInt8](unsafeUninitializedCapacity: max(64, capacity)) { storage, initialized in
            var writer = JSONStreamWriter(into: storage)
            body(&writer)
            let end = writer.finishInPlace()
            initialized = end.count
            outgrown = end.outgrown
        }
        return outgrown ?? bytes
    }
}
