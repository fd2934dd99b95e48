#if canImport(Glibc)
    import Glibc
#endif

/// Replaces a file all or nothing: the new contents go to a temporary file beside it, which gets its mode and owner,
/// is flushed to the disk (`fsync`) and renamed over the old one; then the folder is flushed, so that a power cut
/// leaves the old file or the new one, never a part. The one way BeaconMesh replaces a file it owns (credentials, ACLs,
/// the dashboard's users).
public enum AtomicFile {
    /// Why a replacement failed (nothing was changed): the path and the system's reason.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Replaces `path` with `bytes`, the new file with `mode` and, when given, `owner` (as root; otherwise the
    /// caller's).
    public static func replace(_ path: String, with bytes: [UInt8], mode: mode_t, owner: (uid: uid_t, gid: gid_t)? = nil) throws(Failure) {
        let temporary = path + ".tmp-\(getpid())"
        let failure = "cannot write \(path)"
        let descriptor = try call(failure) { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL, mode) }
        // errno is read right after each call that fails (in `call`), before `close` or `unlink` can change it.
        do throws(Failure) {
            let written = try call(failure) { bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }
            guard written == bytes.count else {
                throw Failure(description: "\(failure): only \(written) of \(bytes.count) bytes were written")
            }
            if let owner { _ = fchown(descriptor, owner.uid, owner.gid) }
            _ = fchmod(descriptor, mode)
            try call(failure) { fsync(descriptor) }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        do throws(Failure) {
            try call(failure) { close(descriptor) }
            try call(failure) { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let directory = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    @discardableResult
    private static func call<Result: BinaryInteger>(_ failure: String, _ body: () -> Result) throws(Failure) -> Result {
        let result = body()
        let savedErrno = errno
        guard result >= 0 else { throw Failure(description: "\(failure): \(String(cString: strerror(savedErrno)))") }
        return result
    }
}
