import CJSONC

#if canImport(Glibc)
    import Glibc
#endif

/// Parses JSON text with json-c: with `JSONReader`, the only code of BeaconMesh that touches json-c.
///
/// json-c objects live only inside `withDocument`'s body; `parse` turns a whole document into a `JSONValue` for
/// tools and tests (payload decoders read through `JSONReader` instead).
enum JSONCBridge {
    /// Documents nest no deeper than this; deeper ones are refused as malformed.
    static let maximumDepth: Int32 = 32

    /// Parses exactly one JSON document from `bytes`; trailing bytes other than white space are an error.
    static func parse(_ bytes: [UInt8]) throws(WireError) -> JSONValue {
        try withDocument(bytes) { value(of: $0) }
    }

    /// Parses exactly one JSON document from `bytes` and hands its root (`nil` for a JSON `null`) to `body`; the
    /// document is freed when `body` returns, so nothing of it may escape.
    static func withDocument<T>(_ bytes: [UInt8], _ body: (OpaquePointer?) throws(WireError) -> T) throws(WireError) -> T {
        guard let tokener = ThreadTokener.current() else { throw .invalidJSON("out of memory") }
        json_tokener_reset(tokener)
        let object: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                json_tokener_parse_ex(tokener, characters.baseAddress, Int32(characters.count))
            }
        }
        let status = json_tokener_get_error(tokener)
        guard status == json_tokener_success else {
            if let object { json_object_put(object) }
            let reason = status == json_tokener_continue ? "the document ends too early" : String(cString: json_tokener_error_desc(status))
            throw .invalidJSON(reason)
        }
        defer { json_object_put(object) }
        let end = Int(json_tokener_get_parse_end(tokener))
        if bytes[end...].contains(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) {
            throw .invalidJSON("unexpected text after the document")
        }
        return try body(object)
    }

    static func value(of object: OpaquePointer?) -> JSONValue {
        guard let object else { return .null }
        switch json_object_get_type(object) {
        case json_type_null:
            return .null
        case json_type_boolean:
            return .bool(json_object_get_boolean(object) != 0)
        case json_type_int:
            return .int(json_object_get_int64(object))
        case json_type_double:
            return .double(json_object_get_double(object))
        case json_type_string:
            let length = Int(json_object_get_string_len(object))
            guard let characters = json_object_get_string(object) else { return .string("") }
            return characters.withMemoryRebound(to: UInt8.self, capacity: length) {
                .string(String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self))
            }
        case json_type_array:
            let count = json_object_array_length(object)
            return .array((0..<count).map { value(of: json_object_array_get_idx(object, $0)) })
        case json_type_object:
            var members: [(String, JSONValue)] = []
            var iterator = json_object_iter_begin(object)
            var end = json_object_iter_end(object)
            while json_object_iter_equal(&iterator, &end) == 0 {
                let key = String(cString: json_object_iter_peek_name(&iterator))
                members.append((key, value(of: json_object_iter_peek_value(&iterator))))
                json_object_iter_next(&iterator)
            }
            return .object(members)
        default:
            return .null
        }
    }
}

/// One json-c tokener per thread, reset and reused for every document the thread parses (making one costs about
/// a tenth of parsing a sighting batch). Parsing never suspends, so a task cannot move threads while it uses one.
private enum ThreadTokener {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { tokener in
            if let tokener { json_tokener_free(tokener.assumingMemoryBound(to: json_tokener.self)) }
        }
        return key
    }()

    /// This thread's tokener; `nil` only when memory runs out.
    static func current() -> UnsafeMutablePointer<json_tokener>? {
        if let existing = pthread_getspecific(key) { return existing.assumingMemoryBound(to: json_tokener.self) }
        guard let fresh = json_tokener_new_ex(JSONCBridge.maximumDepth) else { return nil }
        pthread_setspecific(key, UnsafeRawPointer(fresh))
        return fresh
    }
}
