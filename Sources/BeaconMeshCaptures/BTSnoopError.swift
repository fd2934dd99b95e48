import Glibc

/// Why reading or writing a btsnoop capture failed, naming the file; `description` is one line a person can act on.
public struct BTSnoopError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What exactly went wrong.
    public enum Problem: Hashable, Sendable {
        /// `open` failed with this `errno`.
        case cannotOpen(errno: Int32)
        /// `read` failed with this `errno`.
        case cannotRead(errno: Int32)
        /// `write` or `close` failed with this `errno`.
        case cannotWrite(errno: Int32)
        /// The file is shorter than the 16-byte btsnoop header.
        case tooShortForHeader(byteCount: Int)
        /// The file does not start with `"btsnoop\0"`.
        case notBTSnoop
        /// The header names a format version other than 1.
        case unsupportedVersion(UInt32)
        /// The header names a datalink other than 1001 (HCI) or 1002 (H4).
        case unsupportedDatalink(UInt32)
        /// The file ends inside a record: the record at `byteOffset` needs `needed` bytes, only `available` remain.
        case truncatedRecord(frameNumber: Int, byteOffset: Int, needed: Int, available: Int)
        /// A record header claims more bytes than any HCI packet has: the file is damaged.
        case oversizedRecord(frameNumber: Int, byteOffset: Int, includedLength: UInt32)
    }

    /// The capture file's path, as given.
    public var path: String
    public var problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .cannotOpen(let code):
            return "cannot open \(path): \(Self.systemMessage(code))"
        case .cannotRead(let code):
            return "cannot read \(path): \(Self.systemMessage(code))"
        case .cannotWrite(let code):
            return "cannot write \(path): \(Self.systemMessage(code))"
        case .tooShortForHeader(0):
            return "\(path) is not a btsnoop capture: the file is empty"
        case .tooShortForHeader(let byteCount):
            return "\(path) is not a btsnoop capture: it is \(byteCount) bytes long, "
                + "shorter than the \(BTSnoopFormat.fileHeaderSize)-byte btsnoop header"
        case .notBTSnoop:
            return "\(path) is not a btsnoop capture: it does not start with \"btsnoop\""
        case .unsupportedVersion(let version):
            return "\(path) is btsnoop version \(version); only version 1 can be read"
        case .unsupportedDatalink(let datalink):
            return "\(path) holds btsnoop datalink \(datalink); only 1001 (HCI) and 1002 (HCI UART/H4) can be read"
        case .truncatedRecord(let frameNumber, let byteOffset, let needed, let available):
            return "\(path) is truncated: record \(frameNumber) at byte \(byteOffset) needs \(needed) bytes "
                + "but the file ends after \(available)"
        case .oversizedRecord(let frameNumber, let byteOffset, let includedLength):
            return "\(path) is damaged: record \(frameNumber) at byte \(byteOffset) claims \(includedLength) bytes, "
                + "more than any HCI packet"
        }
    }

    private static func systemMessage(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
