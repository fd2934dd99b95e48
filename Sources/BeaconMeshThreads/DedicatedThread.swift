import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A thread of its own for work that blocks — a network loop, a socket read, database writes, a database's change
/// feed — so that it never holds one of the concurrency pool's few threads; the one thread type of BeaconMesh.
///
/// It runs its body once, named as `top -H` and `/proc/PID/task/TID/comm` show it (at most 15 bytes). `join()` waits
/// for the body to end; a thread nobody joins is detached when the last reference to it goes, so it cleans up after
/// itself. The body travels to the thread as a retained box through pthread's `void *` argument and is taken back
/// exactly once there.
public final class DedicatedThread: Sendable {
    /// A thread the system would not start (`pthread_create` refused: too many threads, no memory).
    public struct StartError: Error, CustomStringConvertible, Sendable {
        /// The name the thread would have had.
        public let name: String
        /// The error number `pthread_create` returned.
        public let code: Int32

        public var description: String {
            let reason = strerror(code).map { String(cString: $0) } ?? "error \(code)"
            return "could not start the \(name) thread: \(reason)"
        }
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// The pthread, until it has been joined or detached.
    private let handle: Mutex<pthread_t?>

    /// Starts a thread named `name` running `body`; throws if the system refuses a thread.
    public init(name: String, _ body: @escaping @Sendable () -> Void) throws(StartError) {
        let threadName = String(name.utf8.prefix(15)) ?? String(name.prefix(15))
        let argument = Unmanaged.passRetained(
            Body {
                DedicatedThread.nameCurrentThread(threadName)
                body()
            }
        ).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<Body>.fromOpaque(argument).takeRetainedValue().run()
                return nil
            }, argument)
        guard code == 0 else {
            Unmanaged<Body>.fromOpaque(argument).release()
            throw StartError(name: name, code: code)
        }
        handle = Mutex(thread)
    }

    deinit {
        if let thread = handle.withLock({ $0 }) { pthread_detach(thread) }
    }

    /// Waits until the body has ended; later calls return at once. Called from the thread itself (its body asked
    /// its owner to stop), it only detaches the thread, which ends when the body returns.
    public func join() {
        guard
            let thread = handle.withLock({ value -> pthread_t? in
                defer { value = nil }
                return value
            })
        else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// Names the calling thread through `/proc/thread-self/comm` (Linux; `prctl` is variadic, which Swift cannot
    /// call). A name is a help for `top -H` and `perf`, nothing depends on it: a failure is ignored.
    private static func nameCurrentThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = name.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        close(descriptor)
    }
}
