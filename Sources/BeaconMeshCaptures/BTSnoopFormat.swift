/// The fixed facts of the btsnoop v1 capture format (as written by Android's HCI snoop log, `btmon -w` and
/// Wireshark), shared by `BTSnoopReader` and `BTSnoopWriter`.
///
/// A file is a 16-byte header (`"btsnoop\0"`, version, datalink; big-endian) followed by records: a 24-byte record
/// header (original length, included length, flags, cumulative drops, timestamp) and the included packet bytes.
public enum BTSnoopFormat {
    /// The 8 bytes every btsnoop file starts with.
    public static let magic: [UInt8] = Array("btsnoop\0".utf8)
    /// The only format version there is.
    public static let version: UInt32 = 1
    /// Size of the file header: magic, version, datalink.
    public static let fileHeaderSize = 16
    /// Size of each record header: original length, included length, flags, drops, timestamp.
    public static let recordHeaderSize = 24
    /// btsnoop timestamps count microseconds since 0000-01-01 (proleptic Gregorian); subtract this for Unix time.
    public static let unixEpochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000
    /// Largest included length accepted: an HCI packet (ACL data up to 65 535 bytes plus headers) always fits.
    /// Anything larger means a damaged file, and reading it would mean a needless giant allocation.
    public static let maximumRecordSize = 65_535 + 16

    /// Record flag bit 0: set when the controller sent the packet to the host (received), clear when sent.
    public static let receivedFlag: UInt32 = 0x1
    /// Record flag bit 1: set for HCI commands and events, clear for data packets.
    public static let commandOrEventFlag: UInt32 = 0x2

    /// H4 packet indicators: the first byte of every packet in a datalink 1002 file.
    public enum H4PacketType {
        public static let command: UInt8 = 0x01
        public static let aclData: UInt8 = 0x02
        public static let event: UInt8 = 0x04
    }
}

/// What the packets in a btsnoop file look like (its "datalink" header field).
public enum BTSnoopDatalink: UInt32, Hashable, Sendable {
    /// HCI packets without an H4 indicator; the record flags tell command/event from data, and direction.
    case hciUnencapsulated = 1001
    /// HCI UART (H4): each packet starts with its H4 indicator (0x01 command, 0x02 ACL, 0x04 event, …).
    case h4 = 1002
}
