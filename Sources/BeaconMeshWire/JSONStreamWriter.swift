/// Prints one JSON object whose big arrays are written element by element, so memory follows the output and not
/// a document tree: the envelope's members first, then each array, then the closing brace.
///
/// Every element is built and printed by json-c (`JSONCObjectBuilder`) and freed at once.
struct JSONStreamWriter {
    private var output: [UInt8] = []

    /// Starts the object with the members `envelope` writes; `capacity` is a guess at the final size in bytes.
    init(capacity: Int, envelope: (inout JSONCObjectBuilder) -> Void) {
        output.reserveCapacity(capacity)
        JSONCObjectBuilder.append(to: &output, envelope)
        output.removeLast()  // the envelope's closing brace: more members follow
    }

    /// Adds `key` with an array of one object per element of `items`, written by `write`.
    mutating func objects<Items: Sequence>(
        _ key: StaticString, _ items: Items, _ write: (Items.Element, inout JSONCObjectBuilder) -> Void
    ) {
        openMember(key)
        output.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONCObjectBuilder.append(to: &output) { write(item, &$0) }
        }
        output.append(UInt8(ascii: "]"))
    }

    /// Adds `key` with an array of strings.
    mutating func strings(_ key: StaticString, _ items: [String]) {
        openMember(key)
        output.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONCObjectBuilder.appendString(item, to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// Adds `key` with a small value printed whole.
    mutating func value(_ key: StaticString, _ value: JSONValue) {
        openMember(key)
        output += WireCodec.serialize(value)
    }

    /// Closes the object and hands over its bytes.
    consuming func finish() -> [UInt8] {
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `,"key":` — keys are the contract's literal names, which need no escaping.
    private mutating func openMember(_ key: StaticString) {
        output.append(UInt8(ascii: ","))
        output.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { output.append(contentsOf: $0) }
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
    }
}
