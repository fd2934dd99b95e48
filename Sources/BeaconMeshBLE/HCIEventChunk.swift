/// HCI events handed over together, each with the time it was heard: their H4 bytes lie back to back in one buffer,
/// so a chunk of hundreds of events costs one allocation, not one per event.
///
/// The radio (`LEScanner`) delivers what it read in a few milliseconds as one chunk; a capture replay reads its
/// packets straight into one. Read the events with `forEach(_:)`, which lends each packet's bytes in place.
public struct HCIEventChunk: Sendable, Equatable {
    /// Each event: its timestamp (8 bytes), its length (2 bytes), then its bytes; native byte order. Only
    /// `storage[0..<used]` holds events: the rest is room already made, so that appending an event is one copy
    /// (growing an array by an event's bytes checked its capacity and uniqueness once per piece).
    private var storage: [UInt8] = []
    private var used = 0
    /// How many events the chunk holds.
    public private(set) var count = 0

    private static let headerSize = 10

    /// An empty chunk with room for `bytes` bytes of events (`reservingCapacityFor` a typical chunk saves regrowing).
    public init(reservingCapacityFor bytes: Int = 0) {
        storage = [UInt8](repeating: 0, count: max(0, bytes))
    }

    /// Whether the chunk holds no event.
    public var isEmpty: Bool { count == 0 }

    /// The bytes the chunk occupies (events and their headers), for bounding memory.
    public var byteCount: Int { used }

    /// The bytes of the chunk's buffer: its events and the room made for more (what holding the chunk costs).
    public var bufferByteCount: Int { storage.count }

    /// Appends one event (an H4 packet of at most 65,535 bytes; longer ones are cut there) heard at
    /// `timestampMicroseconds`.
    public mutating func append(_ packet: UnsafeRawBufferPointer, timestampMicroseconds: Int64) {
        let length = min(packet.count, Int(UInt16.max))
        let start = used
        let end = start + Self.headerSize + length
        if end > storage.count { storage.append(contentsOf: repeatElement(0, count: max(end - storage.count, storage.count))) }
        storage.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: timestampMicroseconds, toByteOffset: start, as: Int64.self)
            bytes.storeBytes(of: UInt16(length), toByteOffset: start + 8, as: UInt16.self)
            if let source = packet.baseAddress, length > 0 {
                (bytes.baseAddress! + start + Self.headerSize).copyMemory(from: source, byteCount: length)
            }
        }
        used = end
        count += 1
    }

    /// Appends one event given as an array; see `append(_:timestampMicroseconds:)`.
    public mutating func append(_ packet: [UInt8], timestampMicroseconds: Int64) {
        packet.withUnsafeBytes { append($0, timestampMicroseconds: timestampMicroseconds) }
    }

    /// Empties the chunk, keeping its buffer for the next events.
    public mutating func removeAll() {
        used = 0
        count = 0
    }

    /// Two chunks are equal when they hold the same events with the same times (whatever room each has left).
    public static func == (lhs: HCIEventChunk, rhs: HCIEventChunk) -> Bool {
        lhs.count == rhs.count && lhs.storage[0..<lhs.used] == rhs.storage[0..<rhs.used]
    }

    /// Calls `body` with each event in order: its bytes (valid only during the call) and when it was heard.
    public func forEach(_ body: (_ packet: UnsafeRawBufferPointer, _ timestampMicroseconds: Int64) throws -> Void) rethrows {
        try storage.withUnsafeBytes { bytes in
            var offset = 0
            while offset < used {
                let timestamp = bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)
                let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt16.self))
                let start = offset + Self.headerSize
                try body(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]), timestamp)
                offset = start + length
            }
        }
    }

    /// The events as separate packets (a copy each: for tests and occasional readers, not the hot path).
    public var packets: [HCIEventPacket] {
        var packets: [HCIEventPacket] = []
        packets.reserveCapacity(count)
        forEach { packets.append(HCIEventPacket(bytes: Array($0), timestampMicroseconds: $1)) }
        return packets
    }
}
