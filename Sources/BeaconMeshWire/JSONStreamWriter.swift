import BeaconMeshCore

/// Writes compact JSON text straight into a byte buffer, value by value: the one writer of every payload
/// BeaconMesh sends. Output is UTF-8, members in the order written, strings escaped as json-c escapes them
/// (slashes not escaped), doubles in Swift's shortest round-trip spelling (`11.22`, `-61.0`), non-finite doubles
/// as `null`.
///
/// Commas are placed by the writer: open an object or array, write its members or elements, close it. Every
/// payload written here is parsed back by json-c in `BeaconMeshWireTests`.
///
/// The bytes go into a plain buffer (an `Array` checked uniqueness and capacity on every byte, which was most of the
/// cost of a sighting batch): one the writer owns, which `finish` copies out once, or the uninitialised storage of
/// the `Array` being made (`WireCodec.payload`), which needs no copy unless the text outgrows it.
struct JSONStreamWriter: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Whether `start` is the writer's own allocation (else it is borrowed storage, never freed here).
    private var ownsBuffer: Bool
    /// Whether the next value or member follows another one at the same level (and needs a comma first).
    private var followsValue = false

    /// An empty writer; `capacity` is a guess at the final size in bytes.
    init(capacity: Int = 256) {
        self.capacity = max(64, capacity)
        start = .allocate(capacity: self.capacity)
        ownsBuffer = true
    }

    /// A writer into `storage`, which must outlive it; text that outgrows `storage` moves to a buffer of its own.
    init(into storage: UnsafeMutableBufferPointer<UInt8>) {
        precondition(storage.count > 0)
        start = storage.baseAddress!
        capacity = storage.count
        ownsBuffer = false
    }

    deinit { if ownsBuffer { start.deallocate() } }

    /// Hands over the bytes written.
    consuming func finish() -> [UInt8] {
        let bytes = [UInt8](UnsafeBufferPointer(start: start, count: count))
        if ownsBuffer { start.deallocate() }
        discard self
        return bytes
    }

    /// Ends a writer made `into:` storage: how many bytes it wrote there, or `nil` with the bytes copied out if they
    /// outgrew it.
    consuming func finishInPlace() -> (count: Int, outgrown: [UInt8]?) {
        guard ownsBuffer else {
            let written = count
            discard self
            return (written, nil)
        }
        return (0, finish())
    }

    // MARK: Structure

    /// Writes an object whose members `body` writes.
    mutating func object(_ body: (inout JSONStreamWriter) -> Void) {
        separate()
        put(UInt8(ascii: "{"))
        followsValue = false
        body(&self)
        put(UInt8(ascii: "}"))
        followsValue = true
    }

    /// Writes an array whose elements `body` writes.
    mutating func array(_ body: (inout JSONStreamWriter) -> Void) {
        separate()
        put(UInt8(ascii: "["))
        followsValue = false
        body(&self)
        put(UInt8(ascii: "]"))
        followsValue = true
    }

    /// Writes an array of one element per item of `items`, each written by `write`.
    mutating func array<Items: Sequence>(_ items: Items, _ write: (Items.Element, inout JSONStreamWriter) -> Void) {
        array { writer in
            for item in items { write(item, &writer) }
        }
    }

    /// Writes a member name (`"name":`); its value comes next. Names are the contract's literals, which need no
    /// escaping.
    mutating func key(_ name: StaticString) {
        name.withUTF8Buffer { name in
            reserve(name.count + 4)
            if followsValue { poke(UInt8(ascii: ",")) }
            poke(UInt8(ascii: "\""))
            poke(name)
            poke(UInt8(ascii: "\""))
            poke(UInt8(ascii: ":"))
        }
        followsValue = false
    }

    /// Writes a member name known only at run time (a member's custom field), escaped.
    mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        put(UInt8(ascii: ":"))
        followsValue = false
    }

    // MARK: Values

    mutating func null() {
        separate()
        appendLiteral("null")
        followsValue = true
    }

    mutating func bool(_ value: Bool) {
        separate()
        appendLiteral(value ? "true" : "false")
        followsValue = true
    }

    /// Any integer of up to 64 bits, in decimal.
    mutating func int<Integer: BinaryInteger>(_ value: Integer) {
        separate()
        if value < 0 { put(UInt8(ascii: "-")) }
        appendDigits(UInt64(value.magnitude))
        followsValue = true
    }

    /// A number in its shortest exact spelling; `null` for a non-finite one (JSON has no infinity).
    mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        separate()
        var spelling = value.description
        spelling.withUTF8 { put($0) }
        followsValue = true
    }

    /// A string, quoted and escaped.
    mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        followsValue = true
    }

    /// A string of `ascii` bytes that need no escaping (canonical beacon keys, addresses), quoted.
    mutating func string(ascii bytes: UnsafeBufferPointer<UInt8>) {
        separate()
        put(UInt8(ascii: "\""))
        put(bytes)
        put(UInt8(ascii: "\""))
        followsValue = true
    }

    // MARK: Members (a name and its value)

    mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        int(value)
    }

    mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        int(value)
    }

    mutating func member(_ name: StaticString, _ value: UInt64) {
        key(name)
        int(value)
    }

    mutating func member(_ name: StaticString, _ value: UInt16) {
        key(name)
        int(value)
    }

    mutating func member(_ name: StaticString, _ value: Double) {
        key(name)
        double(value)
    }

    mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// A member whose value is `null` when there is none.
    mutating func member(_ name: StaticString, orNull value: Int?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    /// A member whose value is `null` when there is none.
    mutating func member(_ name: StaticString, orNull value: Double?) {
        key(name)
        if let value { double(value) } else { null() }
    }

    /// A timestamp, as its milliseconds.
    mutating func member(_ name: StaticString, _ value: Timestamp) {
        key(name)
        int(value.milliseconds)
    }

    /// A timestamp's milliseconds, or `null` when there is none.
    mutating func member(_ name: StaticString, orNull value: Timestamp?) {
        key(name)
        if let value { int(value.milliseconds) } else { null() }
    }

    /// A member whose value is `null` when there is none.
    mutating func member(_ name: StaticString, orNull value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    /// A member holding an object whose members `body` writes.
    mutating func member(_ name: StaticString, object body: (inout JSONStreamWriter) -> Void) {
        key(name)
        object(body)
    }

    // MARK: Bytes

    private mutating func separate() {
        if followsValue { put(UInt8(ascii: ",")) }
    }

    private mutating func appendLiteral(_ text: StaticString) {
        text.withUTF8Buffer { put($0) }
    }

    private mutating func appendDigits(_ magnitude: UInt64) {
        var digits = 1
        var threshold: UInt64 = 10
        while digits < 20 && magnitude >= threshold {
            digits += 1
            threshold = threshold &* 10
        }
        reserve(digits)
        var rest = magnitude
        var index = count + digits
        repeat {
            index -= 1
            start[index] = UInt8(truncatingIfNeeded: rest % 10) &+ UInt8(ascii: "0")
            rest /= 10
        } while rest > 0
        count += digits
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        var larger = capacity * 2
        while larger < needed { larger *= 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: start, count: count)
        if ownsBuffer { start.deallocate() }
        start = moved
        capacity = larger
        ownsBuffer = true
    }

    /// Appends a byte there is room for.
    @inline(__always)
    private mutating func poke(_ byte: UInt8) {
        start[count] = byte
        count += 1
    }

    /// Appends bytes there is room for.
    @inline(__always)
    private mutating func poke(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let base = bytes.baseAddress { (start + count).update(from: base, count: bytes.count) }
        count += bytes.count
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        reserve(1)
        poke(byte)
    }

    @inline(__always)
    private mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        poke(bytes)
    }

    /// The one string escaper: `text` in quotes, with `"` and `\` backslash-escaped, `\b \f \n \r \t` by name,
    /// other control characters below U+0020 as `\u00xx`, and everything else (slashes, non-ASCII) as its UTF-8.
    private mutating func appendQuoted(_ text: String) {
        put(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if index > runStart { put(UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
                runStart = index + 1
                put(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(byte)
                case 0x08: put(UInt8(ascii: "b"))
                case 0x0C: put(UInt8(ascii: "f"))
                case 0x0A: put(UInt8(ascii: "n"))
                case 0x0D: put(UInt8(ascii: "r"))
                case 0x09: put(UInt8(ascii: "t"))
                default:
                    appendLiteral("u00")
                    put(byte >> 4 &+ UInt8(ascii: "0"))
                    let low = byte & 0xF
                    put(low < 10 ? low &+ UInt8(ascii: "0") : low &- 10 &+ UInt8(ascii: "a"))
                }
            }
            if bytes.count > runStart { put(UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        }
        put(UInt8(ascii: "\""))
    }
}
