/// One packet of a btsnoop capture, normalised to H4 framing (its first byte is the H4 packet indicator).
public struct BTSnoopRecord: Hashable, Sendable {
    /// 1-based position of the record in its file (Wireshark's and tshark's `frame.number`).
    public var frameNumber: Int
    /// When the packet was captured, in microseconds since the Unix epoch.
    public var timestampMicroseconds: Int64
    /// Length of the whole H4 packet when it was captured; larger than `packet.count` if the capture cut it short.
    public var originalLength: Int
    /// Record flags: bit 0 received (controller → host), bit 1 command or event (see `BTSnoopFormat`).
    public var flags: UInt32
    /// Packets the capturing side lost up to this record, as it counted them (usually 0).
    public var cumulativeDrops: UInt32
    /// The packet bytes, starting with the H4 indicator (0x04 for an HCI event).
    public var packet: [UInt8]

    public init(
        frameNumber: Int, timestampMicroseconds: Int64, originalLength: Int, flags: UInt32, cumulativeDrops: UInt32 = 0,
        packet: [UInt8]
    ) {
        self.frameNumber = frameNumber
        self.timestampMicroseconds = timestampMicroseconds
        self.originalLength = originalLength
        self.flags = flags
        self.cumulativeDrops = cumulativeDrops
        self.packet = packet
    }

    /// Whether the controller sent this packet to the host (events, incoming data).
    public var isReceived: Bool { flags & BTSnoopFormat.receivedFlag != 0 }
}
