import BeaconMeshCore
import CJSONC

/// A member name of a json-c object with its hash worked out once, so that looking it up costs no hashing.
///
/// json-c hashes every key of a process with the same function and seed, so a hash taken from any object's table
/// is good for all of them.
struct JSONCKey: Sendable {
    let name: StaticString
    let hash: UInt

    init(_ name: StaticString) {
        self.name = name
        let probe = json_object_new_object()
        defer { json_object_put(probe) }
        hash = lh_get_hash(json_object_get_object(probe), UnsafeRawPointer(name.utf8Start))
    }
}

/// Reads typed fields straight out of a json-c document, for the payload the coordinator reads thousands of times a
/// second (sighting batches): no `JSONValue` tree, keys looked up by precomputed hash, beacon keys parsed from
/// json-c's own bytes, and error paths built only when there is an error.
///
/// A reader is valid only inside `JSONCReader.withVersion1Document`, which frees the document afterwards; the json-c
/// object never leaves this file. Errors name the field exactly as `JSONReader`'s do.
struct JSONCReader {
    private let members: UnsafeMutablePointer<lh_table>
    /// Where the object sits: the root (`nil`) or an element of one of the root's arrays.
    private let element: (array: StaticString, index: Int)?

    private init(object: OpaquePointer, element: (array: StaticString, index: Int)?) {
        members = json_object_get_object(object)
        self.element = element
    }

    /// The object's path in the document, for error messages: empty for the root, else `array[index]`.
    var path: String { element.map { "\($0.array)[\($0.index)]" } ?? "" }

    private static let version = JSONCKey("v")

    /// Parses `bytes` (one JSON object with `"v": 1`) and hands a reader of it to `body`.
    static func withVersion1Document<T>(_ bytes: [UInt8], _ body: (JSONCReader) throws(WireError) -> T) throws(WireError) -> T {
        guard bytes.count <= WireCodec.maximumPayloadBytes else { throw .tooLarge(bytes: bytes.count) }
        return try JSONCBridge.withDocument(bytes) { root throws(WireError) in
            guard let root, json_object_get_type(root) == json_type_object else { throw .wrongType(field: "payload", expected: "an object") }
            let reader = JSONCReader(object: root, element: nil)
            guard let version = reader.member(JSONCReader.version) else { throw .unknownVersion("(missing)") }
            guard json_object_get_type(version) == json_type_int else { throw .unknownVersion("(not a number)") }
            let number = json_object_get_int64(version)
            guard number == 1 else { throw .unknownVersion(String(number)) }
            return try body(reader)
        }
    }

    private func name(_ key: JSONCKey) -> String { element == nil ? "\(key.name)" : "\(path).\(key.name)" }

    /// The member `key`, or `nil` when it is missing (a JSON `null` is a present member whose value is `nil`).
    private func member(_ key: JSONCKey) -> OpaquePointer?? {
        guard let entry = lh_table_lookup_entry_w_hash(members, UnsafeRawPointer(key.name.utf8Start), key.hash) else { return nil }
        return .some(lh_entry_v(entry).map(OpaquePointer.init))
    }

    private func type(_ value: OpaquePointer?) -> json_type { value.map(json_object_get_type) ?? json_type_null }

    func int(_ key: JSONCKey) throws(WireError) -> Int64 {
        guard let value = member(key), type(value) == json_type_int else { throw .wrongType(field: name(key), expected: "an integer") }
        return json_object_get_int64(value)
    }

    func optionalInt(_ key: JSONCKey) throws(WireError) -> Int64? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_int else { throw .wrongType(field: name(key), expected: "an integer or null") }
        return json_object_get_int64(value)
    }

    func uint16(_ key: JSONCKey) throws(WireError) -> UInt16 {
        let number = try int(key)
        guard let small = UInt16(exactly: number) else { throw .absurdValue(field: name(key), value: String(number)) }
        return small
    }

    func double(_ key: JSONCKey) throws(WireError) -> Double {
        guard let value = member(key), type(value) == json_type_int || type(value) == json_type_double else {
            throw .wrongType(field: name(key), expected: "a number")
        }
        return json_object_get_double(value)
    }

    func optionalDouble(_ key: JSONCKey) throws(WireError) -> Double? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_int || type(value) == json_type_double else {
            throw .wrongType(field: name(key), expected: "a number or null")
        }
        return json_object_get_double(value)
    }

    func string(_ key: JSONCKey) throws(WireError) -> String {
        guard let value = member(key), type(value) == json_type_string, let string = value else {
            throw .wrongType(field: name(key), expected: "a string")
        }
        return JSONCReader.text(of: string)
    }

    func optionalString(_ key: JSONCKey) throws(WireError) -> String? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_string, let string = value else { throw .wrongType(field: name(key), expected: "a string or null") }
        return JSONCReader.text(of: string)
    }

    func timestamp(_ key: JSONCKey) throws(WireError) -> Timestamp { Timestamp(milliseconds: try int(key)) }

    func optionalTimestamp(_ key: JSONCKey) throws(WireError) -> Timestamp? { try optionalInt(key).map { Timestamp(milliseconds: $0) } }

    func proximity(_ key: JSONCKey) throws(WireError) -> Proximity {
        guard let proximity = Proximity(rawValue: try string(key)) else {
            throw .wrongType(field: name(key), expected: "immediate, near, far or unknown")
        }
        return proximity
    }

    /// A beacon key member, parsed from json-c's bytes.
    func beaconKey(_ key: JSONCKey) throws(WireError) -> BeaconKey {
        guard let value = member(key), type(value) == json_type_string, let string = value else {
            throw .wrongType(field: name(key), expected: "a beacon key string")
        }
        return try beaconKey(of: string, key: key)
    }

    /// Hands each object of an array member (required) to `body`, in order.
    func forEachObject(_ key: JSONCKey, _ body: (JSONCReader) throws(WireError) -> Void) throws(WireError) {
        guard let value = member(key), type(value) == json_type_array, let array = value else {
            throw .wrongType(field: name(key), expected: "an array")
        }
        for index in 0..<json_object_array_length(array) {
            let element = json_object_array_get_idx(array, index)
            guard type(element) == json_type_object, let element else {
                throw .wrongType(field: "\(name(key))[\(index)]", expected: "an object")
            }
            try body(JSONCReader(object: element, element: (key.name, index)))
        }
    }

    /// The beacon keys of an optional array member of strings.
    func optionalBeaconKeys(_ key: JSONCKey) throws(WireError) -> [BeaconKey] {
        guard let value = member(key), type(value) != json_type_null else { return [] }
        guard type(value) == json_type_array, let array = value else { throw .wrongType(field: name(key), expected: "an array") }
        var keys: [BeaconKey] = []
        for index in 0..<json_object_array_length(array) {
            let element = json_object_array_get_idx(array, index)
            guard type(element) == json_type_string, let element else { throw .wrongType(field: name(key), expected: "a beacon key string") }
            keys.append(try beaconKey(of: element, key: key))
        }
        return keys
    }

    private static func text(of string: OpaquePointer) -> String {
        let length = Int(json_object_get_string_len(string))
        guard let characters = json_object_get_string(string) else { return "" }
        return characters.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The beacon key in a json-c string of member `key` (named in the error only when there is one).
    private func beaconKey(of string: OpaquePointer, key: JSONCKey) throws(WireError) -> BeaconKey {
        let length = Int(json_object_get_string_len(string))
        let parsed = json_object_get_string(string).flatMap { characters in
            characters.withMemoryRebound(to: UInt8.self, capacity: length) {
                BeaconKey(utf8: UnsafeBufferPointer(start: $0, count: length))
            }
        }
        guard let parsed else { throw .absurdValue(field: name(key), value: JSONCReader.text(of: string)) }
        return parsed
    }
}
