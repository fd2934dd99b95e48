import BeaconMeshCore
import CJSONC

/// Reads typed fields straight out of a json-c document, for the payload the coordinator reads thousands of times a
/// second (sighting batches): no `JSONValue` tree, and beacon keys parsed from json-c's own bytes.
///
/// A reader is valid only inside `JSONCReader.withDocument`, which frees the document afterwards; the json-c
/// object never leaves this file. Errors name the field exactly as `JSONReader`'s do.
struct JSONCReader {
    private let object: OpaquePointer
    let path: String

    private init(object: OpaquePointer, path: String) {
        self.object = object
        self.path = path
    }

    /// Parses `bytes` (one JSON object with `"v": 1`) and hands a reader of it to `body`.
    static func withVersion1Document<T>(_ bytes: [UInt8], _ body: (JSONCReader) throws(WireError) -> T) throws(WireError) -> T {
        guard bytes.count <= WireCodec.maximumPayloadBytes else { throw .tooLarge(bytes: bytes.count) }
        guard let tokener = json_tokener_new_ex(JSONCBridge.maximumDepth) else { throw .invalidJSON("out of memory") }
        defer { json_tokener_free(tokener) }
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { json_tokener_parse_ex(tokener, $0.baseAddress, Int32($0.count)) }
        }
        let status = json_tokener_get_error(tokener)
        guard status == json_tokener_success, let root = parsed else {
            if let parsed { json_object_put(parsed) }
            throw .invalidJSON(status == json_tokener_continue ? "the document ends too early" : String(cString: json_tokener_error_desc(status)))
        }
        defer { json_object_put(root) }
        let end = Int(json_tokener_get_parse_end(tokener))
        if bytes[end...].contains(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) {
            throw .invalidJSON("unexpected text after the document")
        }
        guard json_object_get_type(root) == json_type_object else { throw .wrongType(field: "payload", expected: "an object") }
        let reader = JSONCReader(object: root, path: "")
        guard let version = reader.member("v") else { throw .unknownVersion("(missing)") }
        guard json_object_get_type(version) == json_type_int else { throw .unknownVersion("(not a number)") }
        let number = json_object_get_int64(version)
        guard number == 1 else { throw .unknownVersion(String(number)) }
        return try body(reader)
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The member `key`, or `nil` when it is missing (a JSON `null` is a present member whose value is `nil`).
    private func member(_ key: String) -> OpaquePointer?? {
        var value: OpaquePointer?
        guard json_object_object_get_ex(object, key, &value) != 0 else { return nil }
        return .some(value)
    }

    private func type(_ value: OpaquePointer?) -> json_type { value.map(json_object_get_type) ?? json_type_null }

    func int(_ key: String) throws(WireError) -> Int64 {
        guard let value = member(key), type(value) == json_type_int else { throw .wrongType(field: name(key), expected: "an integer") }
        return json_object_get_int64(value)
    }

    func optionalInt(_ key: String) throws(WireError) -> Int64? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_int else { throw .wrongType(field: name(key), expected: "an integer or null") }
        return json_object_get_int64(value)
    }

    func uint16(_ key: String) throws(WireError) -> UInt16 {
        let number = try int(key)
        guard let small = UInt16(exactly: number) else { throw .absurdValue(field: name(key), value: String(number)) }
        return small
    }

    func double(_ key: String) throws(WireError) -> Double {
        guard let value = member(key), type(value) == json_type_int || type(value) == json_type_double else {
            throw .wrongType(field: name(key), expected: "a number")
        }
        return json_object_get_double(value)
    }

    func optionalDouble(_ key: String) throws(WireError) -> Double? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_int || type(value) == json_type_double else {
            throw .wrongType(field: name(key), expected: "a number or null")
        }
        return json_object_get_double(value)
    }

    func string(_ key: String) throws(WireError) -> String {
        guard let value = member(key), type(value) == json_type_string, let string = value else {
            throw .wrongType(field: name(key), expected: "a string")
        }
        return JSONCReader.text(of: string)
    }

    func optionalString(_ key: String) throws(WireError) -> String? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_string, let string = value else { throw .wrongType(field: name(key), expected: "a string or null") }
        return JSONCReader.text(of: string)
    }

    func timestamp(_ key: String) throws(WireError) -> Timestamp { Timestamp(milliseconds: try int(key)) }

    func optionalTimestamp(_ key: String) throws(WireError) -> Timestamp? { try optionalInt(key).map { Timestamp(milliseconds: $0) } }

    func proximity(_ key: String) throws(WireError) -> Proximity {
        guard let proximity = Proximity(rawValue: try string(key)) else {
            throw .wrongType(field: name(key), expected: "immediate, near, far or unknown")
        }
        return proximity
    }

    /// A beacon key member, parsed from json-c's bytes.
    func beaconKey(_ key: String) throws(WireError) -> BeaconKey {
        guard let value = member(key), type(value) == json_type_string, let string = value else {
            throw .wrongType(field: name(key), expected: "a beacon key string")
        }
        return try JSONCReader.beaconKey(of: string, field: name(key))
    }

    /// The objects of an array member (required).
    func objects(_ key: String) throws(WireError) -> [JSONCReader] {
        guard let value = member(key), type(value) == json_type_array, let array = value else {
            throw .wrongType(field: name(key), expected: "an array")
        }
        var readers: [JSONCReader] = []
        for index in 0..<json_object_array_length(array) {
            let element = json_object_array_get_idx(array, index)
            guard type(element) == json_type_object, let element else {
                throw .wrongType(field: "\(name(key))[\(index)]", expected: "an object")
            }
            readers.append(JSONCReader(object: element, path: "\(name(key))[\(index)]"))
        }
        return readers
    }

    /// The beacon keys of an optional array member of strings.
    func optionalBeaconKeys(_ key: String) throws(WireError) -> [BeaconKey] {
        guard let value = member(key), type(value) != json_type_null else { return [] }
        guard type(value) == json_type_array, let array = value else { throw .wrongType(field: name(key), expected: "an array") }
        var keys: [BeaconKey] = []
        for index in 0..<json_object_array_length(array) {
            let element = json_object_array_get_idx(array, index)
            guard type(element) == json_type_string, let element else { throw .wrongType(field: name(key), expected: "a beacon key string") }
            keys.append(try JSONCReader.beaconKey(of: element, field: name(key)))
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

    private static func beaconKey(of string: OpaquePointer, field: String) throws(WireError) -> BeaconKey {
        let length = Int(json_object_get_string_len(string))
        guard let characters = json_object_get_string(string) else { throw .absurdValue(field: field, value: "") }
        let key = characters.withMemoryRebound(to: UInt8.self, capacity: length) {
            BeaconKey(utf8: UnsafeBufferPointer(start: $0, count: length))
        }
        guard let key else { throw .absurdValue(field: field, value: text(of: string)) }
        return key
    }
}
