import BeaconMeshCaptures
import Glibc

/// One HCI event as the radio delivered it: its H4 bytes (`04 code length parameters`) and when it arrived.
///
/// The same shape a btsnoop capture replays (`BTSnoopRecord.packet` and its timestamp), so a scanner pipeline can
/// treat the live radio and a recording alike; `HCIEventParser.forEachReport(inH4Packet:_:)` reads the reports.
public struct HCIEventPacket: Hashable, Sendable {
    /// The event in H4 framing, starting with the indicator 0x04.
    public var bytes: [UInt8]
    /// When the event was read, in microseconds since the Unix epoch (wall clock).
    public var timestampMicroseconds: Int64

    public init(bytes: [UInt8], timestampMicroseconds: Int64) {
        self.bytes = bytes
        self.timestampMicroseconds = timestampMicroseconds
    }

    /// The wall clock now, in microseconds since the Unix epoch: the timestamp for an event read now.
    public static func currentTimestampMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
