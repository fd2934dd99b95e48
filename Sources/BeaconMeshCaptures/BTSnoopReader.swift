import Glibc

/// Reads a btsnoop v1 capture record by record, in file order, giving every packet in H4 framing.
///
/// Accepts datalink 1002 (H4: packets already start with their indicator, as Android snoop logs and `btmon -w`
/// write them) and 1001 (un-encapsulated HCI: the indicator is rebuilt from the record flags — command/event bit
/// set and received → 0x04 event, sent → 0x01 command; bit clear → 0x02 ACL data).
///
/// The file is read in chunks, so captures of any size stream in constant memory. A file that is not a btsnoop
/// capture fails in `init`; a record cut off by the end of the file fails in `next()` after all complete records
/// before it were returned. Not thread-safe: use one reader from one task or thread.
public final class BTSnoopReader {
    /// The capture file's path, as given.
    public let path: String
    /// What the file's packets look like.
    public private(set) var datalink: BTSnoopDatalink

    private let descriptor: Int32
    /// Bytes read from the file; `buffer[consumed...]` are not yet handed out.
    private var buffer: [UInt8] = []
    private var consumed = 0
    /// File offset of `buffer[consumed]`, for error messages.
    private var fileOffset = 0
    private var nextFrameNumber = 1
    private var endOfFile = false
    private static let chunkSize = 64 * 1024

    /// Opens `path` and checks its btsnoop header.
    public init(path: String) throws(BTSnoopError) {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BTSnoopError(path: path, problem: .cannotOpen(errno: errno)) }
        self.descriptor = descriptor
        self.datalink = .h4  // replaced below once the header is read
        let header = try take(BTSnoopFormat.fileHeaderSize) { available in
            .tooShortForHeader(byteCount: available)
        }
        guard Array(header[0..<8]) == BTSnoopFormat.magic else { throw failure(.notBTSnoop) }
        let version = Self.bigEndian32(header, 8)
        guard version == BTSnoopFormat.version else { throw failure(.unsupportedVersion(version)) }
        let datalinkValue = Self.bigEndian32(header, 12)
        guard let datalink = BTSnoopDatalink(rawValue: datalinkValue) else {
            throw failure(.unsupportedDatalink(datalinkValue))
        }
        self.datalink = datalink
    }

    deinit {
        close(descriptor)
    }

    /// The next record, or `nil` at the end of the file.
    public func next() throws(BTSnoopError) -> BTSnoopRecord? {
        var record: BTSnoopRecord?
        guard
            try nextRecord({ header, packet in
                record = BTSnoopRecord(
                    frameNumber: header.frameNumber, timestampMicroseconds: header.timestampMicroseconds,
                    originalLength: header.originalLength, flags: header.flags, cumulativeDrops: header.cumulativeDrops,
                    packet: Array(packet))
            })
        else { return nil }
        return record
    }

    /// Reads the next record and lends its packet (H4 framing, valid only during `body`, straight from the read
    /// buffer: nothing is allocated per record) with when it was captured; `false` at the end of the file.
    public func nextPacket(
        _ body: (_ packet: UnsafeRawBufferPointer, _ timestampMicroseconds: Int64) -> Void
    ) throws(BTSnoopError) -> Bool {
        try nextRecord { header, packet in body(packet, header.timestampMicroseconds) }
    }

    /// A record's header fields, H4-normalised (`originalLength` counts the indicator).
    private struct RecordHeader {
        var frameNumber: Int
        var timestampMicroseconds: Int64
        var originalLength: Int
        var flags: UInt32
        var cumulativeDrops: UInt32
    }

    private func nextRecord(_ body: (RecordHeader, UnsafeRawBufferPointer) -> Void) throws(BTSnoopError) -> Bool {
        let frameNumber = nextFrameNumber
        let recordOffset = fileOffset
        let headerSize = BTSnoopFormat.recordHeaderSize
        if buffer.count - consumed < headerSize {
            guard try fill(atLeast: 1) else { return false }
            guard try fill(atLeast: headerSize) else {
                throw failure(
                    .truncatedRecord(
                        frameNumber: frameNumber, byteOffset: recordOffset, needed: headerSize, available: buffer.count - consumed))
            }
        }
        // One pass over the header (each access to the buffer, a class property, costs an exclusivity check).
        let start = consumed
        let (originalLength, includedLength, flags, drops, timestamp) = buffer.withUnsafeBytes { bytes in
            func field(_ offset: Int) -> UInt32 {
                UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: start + offset, as: UInt32.self))
            }
            return (Int(field(0)), field(4), field(8), field(12), Int64(bitPattern: UInt64(field(16)) << 32 | UInt64(field(20))))
        }
        guard includedLength <= BTSnoopFormat.maximumRecordSize else {
            throw failure(.oversizedRecord(frameNumber: frameNumber, byteOffset: recordOffset, includedLength: includedLength))
        }
        let recordSize = headerSize + Int(includedLength)
        // The header stays unconsumed while the data is read, so the buffer keeps it just before the data.
        if buffer.count - consumed < recordSize, try !fill(atLeast: recordSize) {
            throw failure(
                .truncatedRecord(
                    frameNumber: frameNumber, byteOffset: recordOffset, needed: recordSize, available: buffer.count - consumed))
        }
        var packetStart = consumed + headerSize
        let h4OriginalLength: Int
        switch datalink {
        case .h4:
            h4OriginalLength = originalLength
        case .hciUnencapsulated:
            // The indicator goes in place of the header's last byte, already read: the packet stays in place.
            packetStart -= 1
            buffer[packetStart] = Self.h4Indicator(flags: flags)
            h4OriginalLength = originalLength + 1
        }
        let header = RecordHeader(
            frameNumber: frameNumber, timestampMicroseconds: timestamp &- BTSnoopFormat.unixEpochOffsetMicroseconds,
            originalLength: h4OriginalLength, flags: flags, cumulativeDrops: drops)
        let packetEnd = consumed + recordSize
        buffer.withUnsafeBytes { bytes in body(header, UnsafeRawBufferPointer(rebasing: bytes[packetStart..<packetEnd])) }
        consumed += recordSize
        fileOffset += recordSize
        nextFrameNumber += 1
        return true
    }

    /// Every record of the capture at `path`, in order.
    public static func readAll(path: String) throws(BTSnoopError) -> [BTSnoopRecord] {
        let reader = try BTSnoopReader(path: path)
        var records: [BTSnoopRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// The H4 indicator a datalink 1001 record stands for, from its flags.
    static func h4Indicator(flags: UInt32) -> UInt8 {
        guard flags & BTSnoopFormat.commandOrEventFlag != 0 else { return BTSnoopFormat.H4PacketType.aclData }
        return flags & BTSnoopFormat.receivedFlag != 0 ? BTSnoopFormat.H4PacketType.event : BTSnoopFormat.H4PacketType.command
    }

    /// Hands out the next `count` bytes; if the file ends first, throws the problem `shortage` builds from the number
    /// of bytes that were left.
    private func take(
        _ count: Int, orElse shortage: (_ available: Int) -> BTSnoopError.Problem
    ) throws(BTSnoopError) -> ArraySlice<UInt8> {
        guard try fill(atLeast: count) else { throw failure(shortage(buffer.count - consumed)) }
        let bytes = buffer[consumed..<(consumed + count)]
        consumed += count
        fileOffset += count
        return bytes
    }

    /// Reads until at least `count` unconsumed bytes are buffered; `false` if the file ends first.
    private func fill(atLeast count: Int) throws(BTSnoopError) -> Bool {
        while buffer.count - consumed < count {
            if endOfFile { return false }
            if consumed > 0 {
                buffer.removeFirst(consumed)
                consumed = 0
            }
            let oldCount = buffer.count
            let wanted = max(Self.chunkSize, count - oldCount)
            buffer.append(contentsOf: repeatElement(0, count: wanted))
            var result: Int
            repeat {
                result = buffer.withUnsafeMutableBytes { bytes in
                    read(descriptor, bytes.baseAddress.map { $0 + oldCount }, wanted)
                }
            } while result < 0 && errno == EINTR
            guard result >= 0 else {
                let code = errno
                buffer.removeLast(wanted)
                throw failure(.cannotRead(errno: code))
            }
            buffer.removeLast(wanted - result)
            if result == 0 { endOfFile = true }
        }
        return true
    }

    private func failure(_ problem: BTSnoopError.Problem) -> BTSnoopError {
        BTSnoopError(path: path, problem: problem)
    }

    private static func bigEndian32(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> UInt32 {
        let start = bytes.startIndex + offset
        return UInt32(bytes[start]) << 24 | UInt32(bytes[start + 1]) << 16 | UInt32(bytes[start + 2]) << 8
            | UInt32(bytes[start + 3])
    }
}
