import BeaconMeshCore

/// Reads typed fields out of a decoded JSON object, throwing a `WireError` that names the field.
struct JSONReader {
    let value: JSONValue
    /// Where this object sits in the payload, for error messages (`sightings[2]`).
    let path: String

    init(_ value: JSONValue, path: String = "") throws(WireError) {
        guard case .object = value else { throw .wrongType(field: path.isEmpty ? "payload" : path, expected: "an object") }
        self.value = value
        self.path = path
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Checks `"v": 1`.
    func requireVersion1() throws(WireError) {
        guard let version = value["v"] else { throw .unknownVersion("(missing)") }
        guard version == .int(1) else {
            if case .int(let number) = version { throw .unknownVersion(String(number)) }
            throw .unknownVersion("(not a number)")
        }
    }

    func int(_ key: String) throws(WireError) -> Int64 {
        guard case .int(let number)? = value[key] else { throw .wrongType(field: name(key), expected: "an integer") }
        return number
    }

    func optionalInt(_ key: String) throws(WireError) -> Int64? {
        switch value[key] {
        case nil, .null?: return nil
        case .int(let number)?: return number
        default: throw .wrongType(field: name(key), expected: "an integer or null")
        }
    }

    func uint16(_ key: String) throws(WireError) -> UInt16 {
        let number = try int(key)
        guard let small = UInt16(exactly: number) else { throw .absurdValue(field: name(key), value: String(number)) }
        return small
    }

    func double(_ key: String) throws(WireError) -> Double {
        switch value[key] {
        case .int(let number)?: return Double(number)
        case .double(let number)?: return number
        default: throw .wrongType(field: name(key), expected: "a number")
        }
    }

    func optionalDouble(_ key: String) throws(WireError) -> Double? {
        switch value[key] {
        case nil, .null?: return nil
        case .int(let number)?: return Double(number)
        case .double(let number)?: return number
        default: throw .wrongType(field: name(key), expected: "a number or null")
        }
    }

    func string(_ key: String) throws(WireError) -> String {
        guard case .string(let text)? = value[key] else { throw .wrongType(field: name(key), expected: "a string") }
        return text
    }

    func optionalString(_ key: String) throws(WireError) -> String? {
        switch value[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw .wrongType(field: name(key), expected: "a string or null")
        }
    }

    func bool(_ key: String) throws(WireError) -> Bool {
        guard case .bool(let value)? = value[key] else { throw .wrongType(field: name(key), expected: "true or false") }
        return value
    }

    func timestamp(_ key: String) throws(WireError) -> Timestamp { Timestamp(milliseconds: try int(key)) }

    func optionalTimestamp(_ key: String) throws(WireError) -> Timestamp? {
        try optionalInt(key).map { Timestamp(milliseconds: $0) }
    }

    func array(_ key: String) throws(WireError) -> [JSONValue] {
        guard case .array(let values)? = value[key] else { throw .wrongType(field: name(key), expected: "an array") }
        return values
    }

    func optionalArray(_ key: String) throws(WireError) -> [JSONValue] {
        switch value[key] {
        case nil, .null?: return []
        case .array(let values)?: return values
        default: throw .wrongType(field: name(key), expected: "an array")
        }
    }

    func object(_ key: String) throws(WireError) -> JSONReader {
        guard let member = value[key] else { throw .wrongType(field: name(key), expected: "an object") }
        return try JSONReader(member, path: name(key))
    }

    func linkState(_ key: String) throws(WireError) -> LinkState {
        guard let state = LinkState(rawValue: try string(key)) else {
            throw .wrongType(field: name(key), expected: "\"online\" or \"offline\"")
        }
        return state
    }

    func proximity(_ key: String) throws(WireError) -> Proximity {
        guard let proximity = Proximity(rawValue: try string(key)) else {
            throw .wrongType(field: name(key), expected: "immediate, near, far or unknown")
        }
        return proximity
    }
}
