import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps a second coordinator off a SQLite registry while this one runs: an exclusive `flock` on the file
/// `{database}-coordinator.lock`, held until the process ends (the kernel lets it go however the process ends, so a
/// coordinator killed with `kill -9` starts again at once).
///
/// A SQLite registry is one back office's: its one coordinator holds every store's lease. Two coordinators on one
/// file would both decide for the stores they list, greeting everyone twice; the second is refused instead.
/// (`members` and `report` open the file freely: they decide nothing.)
public final class SoleCoordinatorLock: Sendable {
    /// The lock file.
    public let path: String
    private let descriptor: Int32

    /// Takes the lock for the SQLite registry at `database`; throws if another coordinator holds it.
    public init(database: String) throws(RegistryFailure) {
        path = database + "-coordinator.lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw RegistryFailure(.unavailable, "cannot open the lock file '\(path)' beside the SQLite registry: \(reason)")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let busy = code == EWOULDBLOCK
            let reason = String(cString: strerror(code))
            close(descriptor)
            throw RegistryFailure(
                busy ? .heldByAnotherCoordinator : .unavailable,
                busy
                    ? "another coordinator runs on the SQLite registry '\(database)': with SQLite one coordinator serves the stores (several need a shared PostgreSQL database)"
                    : "cannot lock '\(path)': \(reason)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}
