import CJSONC

/// Writes one JSON object straight into json-c, without a `JSONValue` tree: for the payloads a node sends twice a
/// second with thousands of entries. Keys are `StaticString`s, handed to json-c as constants (no copy, no hashing
/// of new key strings).
///
/// Only `JSONCObjectBuilder.serialize` creates one; the json-c objects never leave it.
struct JSONCObjectBuilder: ~Copyable {
    private let object: OpaquePointer

    private init(object: OpaquePointer) {
        self.object = object
    }

    /// Builds an object with `body` and prints it as compact UTF-8 JSON.
    static func serialize(_ body: (inout JSONCObjectBuilder) -> Void) -> [UInt8] {
        var output: [UInt8] = []
        append(to: &output, body)
        return output
    }

    /// Builds an object with `body`, appends its compact JSON to `output`, and frees it at once.
    static func append(to output: inout [UInt8], _ body: (inout JSONCObjectBuilder) -> Void) {
        guard let root = json_object_new_object() else {
            output += Array("{}".utf8)
            return
        }
        defer { json_object_put(root) }
        var builder = JSONCObjectBuilder(object: root)
        body(&builder)
        var length = 0
        guard let text = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &length)
        else {
            output += Array("{}".utf8)
            return
        }
        text.withMemoryRebound(to: UInt8.self, capacity: length) { output.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// Prints a JSON string value (quotes and escapes by json-c) onto `output`.
    static func appendString(_ value: String, to output: inout [UInt8]) {
        var text = value
        guard let string = text.withUTF8({ bytes in
            bytes.withMemoryRebound(to: CChar.self) { json_object_new_string_len($0.baseAddress, Int32($0.count)) }
        }) else { return }
        defer { json_object_put(string) }
        var length = 0
        guard let printed = json_object_to_json_string_length(string, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &length)
        else { return }
        printed.withMemoryRebound(to: UInt8.self, capacity: length) { output.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }

    private func add(_ key: StaticString, _ value: OpaquePointer?) {
        key.withUTF8Buffer { bytes in
            bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count + 1) {
                _ = json_object_object_add_ex(object, $0, value, UInt32(JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT))
            }
        }
    }

    mutating func set(_ key: StaticString, _ value: Int64) { add(key, json_object_new_int64(value)) }
    mutating func set(_ key: StaticString, _ value: Int) { add(key, json_object_new_int64(Int64(value))) }

    /// A number in its shortest exact spelling; `null` for a non-finite one.
    mutating func set(_ key: StaticString, _ value: Double) {
        add(key, value.isFinite ? json_object_new_double_s(value, value.description) : nil)
    }

    mutating func set(_ key: StaticString, _ value: String) {
        var text = value
        add(key, text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { json_object_new_string_len($0.baseAddress, Int32($0.count)) }
        })
    }

    mutating func setNull(_ key: StaticString) { add(key, nil) }

    /// A member whose name is only known at run time (custom fields); the key is copied.
    mutating func set(dynamicKey key: String, _ value: String) {
        var text = value
        let string = text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { json_object_new_string_len($0.baseAddress, Int32($0.count)) }
        }
        _ = json_object_object_add(object, key, string)
    }

    /// A nested object written by `body`.
    mutating func setObject(_ key: StaticString, _ body: (inout JSONCObjectBuilder) -> Void) {
        guard let nested = json_object_new_object() else { return }
        var builder = JSONCObjectBuilder(object: nested)
        body(&builder)
        add(key, nested)
    }
}
