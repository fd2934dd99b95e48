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

    /// How the thread shares busy cores with the rest of the program.
    public enum Priority: Sendable {
        /// As every other thread.
        case normal
        /// Work that may wait (reading others' registry changes): at nice 10, a tenth of a normal thread's weight, so
        /// that when the cores are all busy it yields them to the decisions and the network. On idle cores it runs as
        /// fast as any. Not for work timed against a deadline (the lease keeper's renewals), nor for what must be
        /// durable soon (the registry writer: a promo or visit not yet written when the coordinator is killed is
        /// decided again after its restart).
        case background
        /// Work that is durable and never urgent (delivering webhooks from their outbox): Linux's `SCHED_IDLE`, so it
        /// runs only on cores nothing else wants, and any other thread that wakes takes the core from it at once (a
        /// nice thread keeps it for a time slice, which delays every hop of an event through a busy machine). On idle
        /// cores it runs as fast as any; while the cores stay busy it waits.
        case idle

        /// Sets the calling thread's priority (Linux keeps one per thread).
        func apply() {
            switch self {
            case .normal: break
            case .background: DedicatedThread.setCurrentThreadNice(10)
            case .idle:
                var parameters = sched_param()
                parameters.sched_priority = 0
                // SCHED_IDLE (5, `<linux/sched.h>`): glibc's headers name it only for _GNU_SOURCE, which Swift's import lacks.
                _ = pthread_setschedparam(pthread_self(), 5, &parameters)
            }
        }
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// The pthread, until it has been joined or detached.
    private let handle: Mutex<pthread_t?>

    /// Starts a thread named `name` running `body` at `priority`; throws if the system refuses a thread.
    public init(name: String, priority: Priority = .normal, _ body: @escaping @Sendable () -> Void) throws(StartError) {
        let threadName = String(name.utf8.prefix(15)) ?? String(name.prefix(15))
        let argument = Unmanaged.passRetained(
            Body {
                DedicatedThread.nameCurrentThread(threadName)
                priority.apply()
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

    /// Gives the calling thread `priority`: for a thread a library starts and runs (an event loop of async-http-client
    /// that does only background work), where `init(name:priority:_:)` cannot be used.
    public static func setCurrentThread(_ priority: Priority) {
        priority.apply()
    }

    /// Sets the calling thread's nice value to `nice` (on Linux `PRIO_PROCESS` with `who` 0 is the calling thread).
    /// Lowering one's priority needs no privilege; raising it does, so a process already nicer than `nice` keeps its
    /// own. A failure leaves the thread as it was.
    private static func setCurrentThreadNice(_ nice: Int32) {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
    }

    /// Names the calling thread through `/proc/thread-self/comm` (Linux; `prctl` is variadic, which Swift cannot
    /// call). A name is a help for `top -H` and `perf`, nothing depends on it: a failure is ignored.
    public static func nameCurrentThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = name.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        close(descriptor)
    }
}
