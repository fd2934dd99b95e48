/// Cuts an H4 byte stream (HCI over a UART, a pipe or a stream socket) back into whole packets.
///
/// A stream keeps no packet boundaries: one read may end inside a packet or hold several. Feed every chunk read to
/// `append(_:_:)`; it hands out each packet as soon as its last byte has arrived and keeps the unfinished rest.
/// Packet sizes come from each type's header: command `01 | opcode (2) | len (1)`, ACL `02 | handle (2) | len (2)`,
/// SCO `03 | handle (2) | len (1)`, event `04 | code | len (1)`, ISO `05 | handle (2) | len (14 bits)`.
/// A byte that is no packet indicator where a packet should start is skipped and counted in `skippedBytes`, so a
/// stream that lost bytes finds its way back instead of stalling. Memory stays below one packet plus one chunk.
public struct H4StreamFramer: Sendable {
    /// Bytes received but not yet handed out; `pending[start...]` is the unfinished packet.
    private var pending: [UInt8] = []
    private var start = 0
    /// Bytes skipped because no packet could start with them.
    public private(set) var skippedBytes = 0

    /// An empty framer.
    public init() {}

    /// How many received bytes wait for the rest of their packet.
    public var bufferedByteCount: Int { pending.count - start }

    /// Adds `bytes` from the stream and calls `body` with each packet completed by them, in order; each packet
    /// buffer (starting with its indicator) is valid only inside `body`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        pending.append(contentsOf: bytes)
        pending.withUnsafeBytes { buffer in
            while start < buffer.count {
                guard let size = Self.packetSize(at: start, in: buffer) else {
                    // Not enough bytes to know, or a byte that starts no packet.
                    if Self.headerSize(indicator: buffer[start]) == nil {
                        skippedBytes += 1
                        start += 1
                        continue
                    }
                    break
                }
                guard start + size <= buffer.count else { break }
                body(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + size)]))
                start += size
            }
        }
        if start == pending.count {
            pending.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 {
            pending.removeFirst(start)
            start = 0
        }
    }

    /// Forgets a partly received packet (after the stream was interrupted).
    public mutating func reset() {
        pending.removeAll(keepingCapacity: true)
        start = 0
    }

    /// Bytes before the payload for each packet indicator: the indicator and the header; `nil` for an unknown one.
    static func headerSize(indicator: UInt8) -> Int? {
        switch indicator {
        case 0x01: 4  // command: indicator, opcode (2), length (1)
        case 0x02: 5  // ACL: indicator, handle (2), length (2)
        case 0x03: 4  // SCO: indicator, handle (2), length (1)
        case 0x04: 3  // event: indicator, code, length (1)
        case 0x05: 5  // ISO: indicator, handle (2), length (14 bits of 2)
        default: nil
        }
    }

    /// The whole size of the packet starting at `offset`, once its header is there; `nil` before that or for an
    /// unknown indicator.
    static func packetSize(at offset: Int, in buffer: UnsafeRawBufferPointer) -> Int? {
        let indicator = buffer[offset]
        guard let header = headerSize(indicator: indicator), offset + header <= buffer.count else { return nil }
        let payload: Int
        switch indicator {
        case 0x02: payload = Int(buffer[offset + 3]) | Int(buffer[offset + 4]) << 8
        case 0x05: payload = (Int(buffer[offset + 3]) | Int(buffer[offset + 4]) << 8) & 0x3FFF
        default: payload = Int(buffer[offset + header - 1])
        }
        return header + payload
    }
}
