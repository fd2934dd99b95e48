import BeaconMeshCore
import CJSONC

/// A member name of a json-c object with its hash worked out once, so that looking it up costs no hashing: the
/// decoders keep their hot keys in `static let`s, and a literal (`"type"`) is hashed where it is used.
///
/// json-c hashes every key of a process with the same function and seed, so a hash taken with any table is good
/// for all of them.
struct JSONKey: ExpressibleByStringLiteral, Sendable {
    let name: StaticString
    let hash: UInt

    init(_ name: StaticString) {
        self.name = name
        hash = lh_get_hash(JSONKey.probe, UnsafeRawPointer(name.utf8Start))
    }

    init(stringLiteral name: StaticString) { self.init(name) }

    /// An empty table, never changed, whose hash function hashes every key.
    nonisolated(unsafe) private static let probe: UnsafeMutablePointer<lh_table> = json_object_get_object(json_object_new_object())
}

/// Reads typed fields straight out of a json-c document — the one way BeaconMesh reads a payload: keys looked up
/// by hash, beacon keys parsed from json-c's own bytes, and error paths (`sightings[2].rssi`) built only when there
/// is an error.
///
/// A reader is valid only inside `JSONReader.withVersion1Document`, which frees the document when its body
/// returns; neither the reader nor anything of json-c may leave that body.
struct JSONReader {
    private let members: UnsafeMutablePointer<lh_table>
    /// The object's path in the document (empty for the root), or that of the array it is element `index` of.
    private let container: String
    private let index: Int?

    private init(object: OpaquePointer, container: String, index: Int? = nil) {
        members = json_object_get_object(object)
        self.container = container
        self.index = index
    }

    /// The object's path in the document, for error messages: empty for the root, else `a.b`, `array[index]`.
    var path: String { index.map { "\(container)[\($0)]" } ?? container }

    private static let version = JSONKey("v")

    /// Parses `bytes` (one JSON object with `"v": 1`, at most `maximumBytes`) and hands a reader of it to `body`.
    static func withVersion1Document<T>(
        _ bytes: [UInt8], maximumBytes: Int = WireCodec.maximumPayloadBytes, _ body: (JSONReader) throws(WireError) -> T
    ) throws(WireError) -> T {
        guard bytes.count <= maximumBytes else { throw .tooLarge(bytes: bytes.count) }
        return try JSONCBridge.withDocument(bytes) { root throws(WireError) in
            guard let root, json_object_get_type(root) == json_type_object else {
                throw .wrongType(field: "payload", expected: "an object")
            }
            let reader = JSONReader(object: root, container: "")
            guard let version = reader.member(JSONReader.version) else { throw .unknownVersion("(missing)") }
            guard json_object_get_type(version) == json_type_int else { throw .unknownVersion("(not a number)") }
            let number = json_object_get_int64(version)
            guard number == 1 else { throw .unknownVersion(String(number)) }
            return try body(reader)
        }
    }

    private func name(_ key: JSONKey) -> String { name("\(key.name)") }

    private func name(_ key: String) -> String {
        let path = self.path
        return path.isEmpty ? key : "\(path).\(key)"
    }

    /// The member `key`, or `nil` when it is missing (a JSON `null` is a present member whose value is `nil`).
    private func member(_ key: JSONKey) -> OpaquePointer?? {
        guard let entry = lh_table_lookup_entry_w_hash(members, UnsafeRawPointer(key.name.utf8Start), key.hash) else { return nil }
        return .some(lh_entry_v(entry).map(OpaquePointer.init))
    }

    private static func type(_ value: OpaquePointer?) -> json_type { value.map(json_object_get_type) ?? json_type_null }
    private func type(_ value: OpaquePointer?) -> json_type { JSONReader.type(value) }

    // MARK: Scalars

    func contains(_ key: JSONKey) -> Bool { member(key) != nil }

    /// The member `key` as a plain value (`nil` when missing), for a part of a document its reader does not know.
    func value(_ key: JSONKey) -> JSONValue? { member(key).map { JSONCBridge.value(of: $0) } }

    func int(_ key: JSONKey) throws(WireError) -> Int64 {
        guard let value = member(key), type(value) == json_type_int else { throw .wrongType(field: name(key), expected: "an integer") }
        return json_object_get_int64(value)
    }

    func optionalInt(_ key: JSONKey) throws(WireError) -> Int64? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_int else { throw .wrongType(field: name(key), expected: "an integer or null") }
        return json_object_get_int64(value)
    }

    func uint16(_ key: JSONKey) throws(WireError) -> UInt16 {
        let number = try int(key)
        guard let small = UInt16(exactly: number) else { throw .absurdValue(field: name(key), value: String(number)) }
        return small
    }

    func optionalUInt16(_ key: JSONKey) throws(WireError) -> UInt16? {
        guard let number = try optionalInt(key) else { return nil }
        guard let small = UInt16(exactly: number) else { throw .absurdValue(field: name(key), value: String(number)) }
        return small
    }

    func double(_ key: JSONKey) throws(WireError) -> Double {
        guard let value = member(key), type(value) == json_type_int || type(value) == json_type_double else {
            throw .wrongType(field: name(key), expected: "a number")
        }
        return json_object_get_double(value)
    }

    func optionalDouble(_ key: JSONKey) throws(WireError) -> Double? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_int || type(value) == json_type_double else {
            throw .wrongType(field: name(key), expected: "a number or null")
        }
        return json_object_get_double(value)
    }

    /// A number from 0 to 1 (a confidence).
    func fraction(_ key: JSONKey) throws(WireError) -> Double {
        let value = try double(key)
        guard (0...1).contains(value) else { throw .absurdValue(field: name(key), value: String(value)) }
        return value
    }

    /// A number from 0 to 1, or `nil` when it is missing or null.
    func optionalFraction(_ key: JSONKey) throws(WireError) -> Double? {
        guard let value = try optionalDouble(key) else { return nil }
        guard (0...1).contains(value) else { throw .absurdValue(field: name(key), value: String(value)) }
        return value
    }

    func string(_ key: JSONKey) throws(WireError) -> String {
        guard let value = member(key), type(value) == json_type_string, let string = value else {
            throw .wrongType(field: name(key), expected: "a string")
        }
        return JSONReader.text(of: string)
    }

    func optionalString(_ key: JSONKey) throws(WireError) -> String? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_string, let string = value else { throw .wrongType(field: name(key), expected: "a string or null") }
        return JSONReader.text(of: string)
    }

    func bool(_ key: JSONKey) throws(WireError) -> Bool {
        guard let value = member(key), type(value) == json_type_boolean else {
            throw .wrongType(field: name(key), expected: "true or false")
        }
        return json_object_get_boolean(value) != 0
    }

    func timestamp(_ key: JSONKey) throws(WireError) -> Timestamp { Timestamp(milliseconds: try int(key)) }

    func optionalTimestamp(_ key: JSONKey) throws(WireError) -> Timestamp? { try optionalInt(key).map { Timestamp(milliseconds: $0) } }

    func proximity(_ key: JSONKey) throws(WireError) -> Proximity {
        guard let value = member(key), type(value) == json_type_string, let string = value,
            let proximity = JSONReader.withBytes(of: string, Proximity.init(utf8:))
        else {
            throw .wrongType(field: name(key), expected: "immediate, near, far or unknown")
        }
        return proximity
    }

    func linkState(_ key: JSONKey) throws(WireError) -> LinkState {
        guard let state = LinkState(rawValue: try string(key)) else {
            throw .wrongType(field: name(key), expected: "\"online\" or \"offline\"")
        }
        return state
    }

    /// A beacon key member, parsed from json-c's bytes.
    func beaconKey(_ key: JSONKey) throws(WireError) -> BeaconKey {
        guard let value = member(key), type(value) == json_type_string, let string = value else {
            throw .wrongType(field: name(key), expected: "a beacon key string")
        }
        return try beaconKey(of: string, key: key)
    }

    // MARK: Objects and arrays

    /// The object member `key` (required).
    func object(_ key: JSONKey) throws(WireError) -> JSONReader {
        guard let value = member(key), type(value) == json_type_object, let object = value else {
            throw .wrongType(field: name(key), expected: "an object")
        }
        return JSONReader(object: object, container: name(key))
    }

    /// The object member `key`, or `nil` when it is null or absent.
    func optionalObject(_ key: JSONKey) throws(WireError) -> JSONReader? {
        guard let value = member(key), type(value) != json_type_null else { return nil }
        guard type(value) == json_type_object, let object = value else { throw .wrongType(field: name(key), expected: "an object or null") }
        return JSONReader(object: object, container: name(key))
    }

    /// The number of elements of the array member `key` (required).
    func count(_ key: JSONKey) throws(WireError) -> Int {
        Int(json_object_array_length(try array(key)))
    }

    /// Hands each object of the array member `key` to `body`, in order; a missing or `null` member is an empty
    /// array only when `optional`.
    func forEachObject(_ key: JSONKey, optional: Bool = false, _ body: (JSONReader) throws(WireError) -> Void) throws(WireError) {
        if optional, type(member(key) ?? nil) == json_type_null { return }
        let array = try array(key)
        let container = name(key)
        for index in 0..<json_object_array_length(array) {
            let element = json_object_array_get_idx(array, index)
            guard type(element) == json_type_object, let element else {
                throw .wrongType(field: "\(container)[\(index)]", expected: "an object")
            }
            try body(JSONReader(object: element, container: container, index: index))
        }
    }

    /// The beacon keys of an optional array member of strings.
    func optionalBeaconKeys(_ key: JSONKey) throws(WireError) -> [BeaconKey] {
        try optionalArray(key, expected: "a beacon key string") { element throws(WireError) in
            type(element) == json_type_string ? try beaconKey(of: element, key: key) : nil
        }
    }

    /// The numbers of an optional array member of integers from 0 to 65535 (anything else: `expected`).
    func optionalUInt16s(_ key: JSONKey, expected: String) throws(WireError) -> [UInt16] {
        try optionalArray(key, expected: expected) { type($0) == json_type_int ? UInt16(exactly: json_object_get_int64($0)) : nil }
    }

    /// The strings of an optional array member of strings.
    func optionalStrings(_ key: JSONKey) throws(WireError) -> [String] {
        try optionalArray(key, expected: "strings") { type($0) == json_type_string ? JSONReader.text(of: $0) : nil }
    }

    /// The elements of an optional array member (missing or `null`: none), each read by `element`; an element it
    /// cannot read (`nil`) is an error naming the member and what it must hold (`expected`).
    private func optionalArray<Element>(
        _ key: JSONKey, expected: String, _ element: (OpaquePointer) throws(WireError) -> Element?
    ) throws(WireError) -> [Element] {
        guard let value = member(key), type(value) != json_type_null else { return [] }
        let array = try array(key)
        var elements: [Element] = []
        for index in 0..<json_object_array_length(array) {
            guard let item = json_object_array_get_idx(array, index), let read = try element(item) else {
                throw .wrongType(field: name(key), expected: expected)
            }
            elements.append(read)
        }
        return elements
    }

    /// This object's members whose values are strings, by name (a member's custom fields), except `excluded`.
    func stringMembers(excluding excluded: Set<String>) -> [String: String] {
        var strings: [String: String] = [:]
        forEachMember { name, value in
            if type(value) == json_type_string, let value, !excluded.contains(name) { strings[name] = JSONReader.text(of: value) }
        }
        return strings
    }

    /// The integers of the object member `key`, by name; a missing member or one that is not an object reads as
    /// empty, a member of it that is not an integer is an error (`key.name`).
    func lenientIntegerMembers(_ key: JSONKey) throws(WireError) -> [String: Int64] {
        guard let value = member(key), type(value) == json_type_object, let object = value else { return [:] }
        let container = name(key)
        var integers: [String: Int64] = [:]
        var failure: WireError?
        JSONReader(object: object, container: container).forEachMember { name, value in
            guard failure == nil else { return }
            guard type(value) == json_type_int else {
                failure = .wrongType(field: "\(container).\(name)", expected: "an integer")
                return
            }
            integers[name] = json_object_get_int64(value)
        }
        if let failure { throw failure }
        return integers
    }

    /// Hands each member of the object member `key` (required) to `body` by name, each of them an object
    /// (`key.name` in errors).
    func forEachObjectMember(_ key: JSONKey, _ body: (String, JSONReader) throws(WireError) -> Void) throws(WireError) {
        let members = try object(key)
        var entries: [(String, OpaquePointer?)] = []
        members.forEachMember { entries.append(($0, $1)) }
        for (name, value) in entries {
            guard type(value) == json_type_object, let value else {
                throw .wrongType(field: members.name(name), expected: "an object")
            }
            try body(name, JSONReader(object: value, container: members.name(name)))
        }
    }

    // MARK: json-c

    private func array(_ key: JSONKey) throws(WireError) -> OpaquePointer {
        guard let value = member(key), type(value) == json_type_array, let array = value else {
            throw .wrongType(field: name(key), expected: "an array")
        }
        return array
    }

    /// Each member of this object in document order, with its value (`nil` for a JSON `null`).
    private func forEachMember(_ body: (String, OpaquePointer?) -> Void) {
        var entry = lh_table_head(members)
        while let current = entry {
            let name = lh_entry_k(current).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
            body(name, lh_entry_v(current).map(OpaquePointer.init))
            entry = lh_entry_next(current)
        }
    }

    /// The text of a json-c string.
    static func text(of string: OpaquePointer) -> String {
        let length = Int(json_object_get_string_len(string))
        guard let characters = json_object_get_string(string) else { return "" }
        return characters.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The beacon key in a json-c string of member `key` (named in the error only when there is one).
    private func beaconKey(of string: OpaquePointer, key: JSONKey) throws(WireError) -> BeaconKey {
        guard let parsed = JSONReader.withBytes(of: string, BeaconKey.init(utf8:)) else {
            throw .absurdValue(field: name(key), value: JSONReader.text(of: string))
        }
        return parsed
    }

    /// What `parse` makes of json-c's bytes of the string `string` (no `String` made); `nil` if it makes nothing.
    private static func withBytes<T>(of string: OpaquePointer, _ parse: (UnsafeBufferPointer<UInt8>) -> T?) -> T? {
        let length = Int(json_object_get_string_len(string))
        return json_object_get_string(string).flatMap { characters in
            characters.withMemoryRebound(to: UInt8.self, capacity: length) { parse(UnsafeBufferPointer(start: $0, count: length)) }
        }
    }
}
