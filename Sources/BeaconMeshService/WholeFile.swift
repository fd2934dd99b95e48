#if canImport(Glibc)
    import Glibc
#endif

/// Reads a file to its end with plain `read` calls, without Foundation: the scanner's config (the scanner keeps
/// Foundation's memory out), and /proc files, which Foundation's `String(contentsOfFile:)` stops reading after the
/// first page (/proc/net/tcp with more than 26 sockets).
public enum WholeFile {
    /// The file's bytes as UTF-8 text (invalid bytes replaced), or `nil` when it cannot be opened or read.
    public static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
