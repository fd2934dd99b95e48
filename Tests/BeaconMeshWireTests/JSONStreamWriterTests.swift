import BeaconMeshCore
import Testing

@testable import BeaconMeshWire

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// What the writer prints is what json-c reads back: every value, escape and number spelling.
@Suite("JSON stream writer")
struct JSONStreamWriterTests {
    /// Writes `value` with the writer and parses it back with json-c.
    private func roundTrip(_ value: JSONValue) throws -> JSONValue {
        try WireCodec.parse(WireCodec.serialize(value))
    }

    @Test("every control character, quotes, backslash, slash and non-ASCII text come back from json-c unchanged")
    func stringsRoundTrip() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let strings = [
            "", "plain", controls, "\"quoted\"", #"back\slash"#, "a/b</script>", "Zoë 李 ☕️ 🧋", "\u{7F}\u{80}\u{FFFF}",
            "tab\there\nnew line\r\u{08}\u{0C}", String(repeating: "\\\"", count: 100),
        ]
        for string in strings {
            #expect(try roundTrip(.string(string)) == .string(string), "\(string.debugDescription)")
            // json-c keeps member names as C strings: a name is anything but NUL.
            let name = String(String.UnicodeScalarView(string.unicodeScalars.filter { $0 != "\u{0}" }))
            #expect(try roundTrip(.object([(name, .string(string))])) == .object([(name, .string(string))]), "as a member name")
        }
    }

    @Test(
        "strings are escaped as json-c escapes them: short escapes by name, other controls as lower-case \\u00xx, slashes and non-ASCII as they are"
    )
    func escapingSpelling() {
        #expect(text(WireCodec.serialize(.string("\"\\/\u{08}\u{0C}\n\r\t"))) == #""\"\\/\b\f\n\r\t""#)
        #expect(text(WireCodec.serialize(.string("\u{00}\u{01}\u{1F}\u{1b}x"))) == #""\u0000\u0001\u001f\u001bx""#)
        #expect(text(WireCodec.serialize(.string("Zoë 李"))) == "\"Zoë 李\"")
        #expect(text(WireCodec.serialize(.object([("a\"b", .null)]))) == #"{"a\"b":null}"#)
    }

    @Test("a payload is the same text whether it fits its size guess (written in place) or outgrows it (copied out)")
    func payloadInPlaceOrOutgrown() throws {
        func write(guess: Int) -> [UInt8] {
            WireCodec.payload(capacity: guess) { body in
                body.member("v", 1)
                body.key("items")
                body.array(Array(0..<2_000)) { item, writer in writer.string("item-\(item)-é\"\\") }
            }
        }
        let fits = write(guess: 64_000)
        let outgrows = write(guess: 64)
        #expect(fits == outgrows)
        #expect(fits.count > 30_000 && fits.count < 64_000)
        let parsed = try WireCodec.parse(fits)
        guard case .object(let members) = parsed, case .array(let items)? = members.first(where: { $0.0 == "items" })?.1 else {
            Issue.record("not an object with items: \(text(fits).prefix(80))")
            return
        }
        #expect(items.count == 2_000 && items.last == .string("item-1999-é\"\\"))
    }

    @Test("integers round-trip from Int64.min to Int64.max")
    func integersRoundTrip() throws {
        let numbers: [Int64] = [
            0, 1, -1, 9, 10, -10, 99, 65_535, -65_536, 1_763_769_600_000, -1_763_769_600_000,
            Int64(Int32.max) + 1, .max, .min, .max - 1, .min + 1,
        ]
        for number in numbers {
            #expect(text(WireCodec.serialize(.int(number))) == String(number))
            #expect(try roundTrip(.array([.int(number)])) == .array([.int(number)]), "a bare number never ends for json-c's tokener")
        }
    }

    @Test("doubles are printed in their shortest exact form and json-c reads back the same double")
    func doublesRoundTrip() throws {
        let numbers: [Double] = [
            11.22, -61, 0.1 + 0.2, 1.8, -63.5, 0, 1e-7, .leastNonzeroMagnitude, 1e300, -1.7976931348623157e308, 123456789.125, 21.5,
        ]
        for number in numbers {
            #expect(try roundTrip(.array([.double(number)])) == .array([.double(number)]), "\(number)")
        }
        let encoded = text(WireCodec.serialize(.array([.double(11.22), .double(-61), .double(0.1 + 0.2), .double(1.8)])))
        #expect(encoded == "[11.22,-61.0,0.30000000000000004,1.8]")
    }

    @Test("a number JSON cannot hold is written as null")
    func nonFiniteDoubles() {
        #expect(text(WireCodec.serialize(.array([.double(.nan), .double(.infinity), .double(-.infinity)]))) == "[null,null,null]")
    }

    @Test("nested objects and arrays round-trip with their members in order, commas in place")
    func nestingRoundTrip() throws {
        let value: JSONValue = .object([
            ("v", .int(1)), ("empty", .object([])), ("list", .array([])), ("flags", .array([.bool(true), .bool(false), .null])),
            ("nested", .object([("a", .array([.object([("b", .array([.int(1), .array([])]))]), .string("c")]))])),
        ])
        let encoded = WireCodec.serialize(value)
        #expect(text(encoded) == #"{"v":1,"empty":{},"list":[],"flags":[true,false,null],"nested":{"a":[{"b":[1,[]]},"c"]}}"#)
        #expect(try WireCodec.parse(encoded) == value)
    }

    @Test("a beacon key is written as exactly its canonical text, every kind and boundary")
    func beaconKeyText() throws {
        let uuids = [BeaconUUID(high: 0, low: 0), BeaconUUID(high: .max, low: .max), BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!]
        var keys: [BeaconKey] = []
        for uuid in uuids {
            for (first, second) in [(0, 0), (9, 10), (99, 100), (999, 1000), (9999, 10000), (65535, 65535)] as [(UInt16, UInt16)] {
                keys.append(.iBeacon(uuid: uuid, major: first, minor: second))
                keys.append(.altBeacon(id1: uuid, id2: second, id3: first))
            }
        }
        keys += [
            .eddystone(namespaceHigh: 0, namespaceLow: 0, instance: 0),
            .eddystone(namespaceHigh: .max, namespaceLow: .max, instance: 0xFFFF_FFFF_FFFF),
            .eddystone(namespaceHigh: 0x0102_0304_0506_0708, namespaceLow: 0x090A, instance: 0x0B0C_0D0E_0F10),
        ]
        for key in keys {
            var writer = JSONStreamWriter()
            writer.string(key)
            let written = writer.finish()
            #expect(text(written) == "\"\(key.description)\"")
            #expect(try WireCodec.parse(written) == .string(key.description))
        }
    }
}
