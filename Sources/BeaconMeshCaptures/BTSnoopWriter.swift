import Glibc

/// Writes a btsnoop v1 capture with datalink 1002 (H4), the format `btmon -r`, Wireshark and Android tools open.
///
/// `init` creates (or empties) the file and writes its header; each `write` appends one record with a single
/// `write(2)`, so after a crash the file holds every record written before it. Packets must be in H4 framing
/// (first byte 0x01 command, 0x02 ACL, 0x04 event, …). Not thread-safe: use one writer from one task or thread.
public final class BTSnoopWriter {
    /// The capture file's path, as given.
    public let path: String

    private var descriptor: Int32
    /// Reused for each record so that writing does not allocate once it has grown.
    private var recordBytes: [UInt8] = []

    /// Creates (or truncates) `path` with mode 0644 and writes the btsnoop header.
    public init(path: String) throws(BTSnoopError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BTSnoopError(path: path, problem: .cannotOpen(errno: errno)) }
        var header = BTSnoopFormat.magic
        Self.appendBigEndian(BTSnoopFormat.version, to: &header)
        Self.appendBigEndian(BTSnoopDatalink.h4.rawValue, to: &header)
        try writeAll(header)
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Appends one H4 packet captured at `timestampMicroseconds` (Unix epoch). `received` is true for what the
    /// controller sent to the host (events, incoming data); the command/event flag is derived from the H4 indicator.
    public func write(h4Packet packet: UnsafeRawBufferPointer, timestampMicroseconds: Int64, received: Bool)
        throws(BTSnoopError)
    {
        var flags: UInt32 = received ? BTSnoopFormat.receivedFlag : 0
        if let indicator = packet.first,
            indicator == BTSnoopFormat.H4PacketType.command || indicator == BTSnoopFormat.H4PacketType.event
        {
            flags |= BTSnoopFormat.commandOrEventFlag
        }
        try write(
            packet: packet, originalLength: packet.count, flags: flags, cumulativeDrops: 0,
            timestampMicroseconds: timestampMicroseconds)
    }

    /// Appends `record` as it is (its frame number is ignored: records are numbered by position).
    public func write(_ record: BTSnoopRecord) throws(BTSnoopError) {
        let outcome = record.packet.withUnsafeBytes { packet in
            Result { () throws(BTSnoopError) in
                try write(
                    packet: packet, originalLength: record.originalLength, flags: record.flags,
                    cumulativeDrops: record.cumulativeDrops, timestampMicroseconds: record.timestampMicroseconds)
            }
        }
        try outcome.get()
    }

    /// Closes the file, reporting a failure to write it out; further writes fail. Also happens on deinit, silently.
    public func close() throws(BTSnoopError) {
        guard descriptor >= 0 else { return }
        let result = Glibc.close(descriptor)
        descriptor = -1
        guard result == 0 else { throw BTSnoopError(path: path, problem: .cannotWrite(errno: errno)) }
    }

    private func write(
        packet: UnsafeRawBufferPointer, originalLength: Int, flags: UInt32, cumulativeDrops: UInt32,
        timestampMicroseconds: Int64
    ) throws(BTSnoopError) {
        recordBytes.removeAll(keepingCapacity: true)
        Self.appendBigEndian(UInt32(clamping: originalLength), to: &recordBytes)
        Self.appendBigEndian(UInt32(clamping: packet.count), to: &recordBytes)
        Self.appendBigEndian(flags, to: &recordBytes)
        Self.appendBigEndian(cumulativeDrops, to: &recordBytes)
        let timestamp = UInt64(bitPattern: timestampMicroseconds &+ BTSnoopFormat.unixEpochOffsetMicroseconds)
        Self.appendBigEndian(UInt32(truncatingIfNeeded: timestamp >> 32), to: &recordBytes)
        Self.appendBigEndian(UInt32(truncatingIfNeeded: timestamp), to: &recordBytes)
        recordBytes.append(contentsOf: packet)
        try writeAll(recordBytes)
    }

    /// Writes every byte, retrying after interrupts and short writes.
    private func writeAll(_ bytes: [UInt8]) throws(BTSnoopError) {
        guard descriptor >= 0 else { throw BTSnoopError(path: path, problem: .cannotWrite(errno: EBADF)) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw BTSnoopError(path: path, problem: .cannotWrite(errno: errno))
            }
            written += result
        }
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }
}
