import CMosquitto
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One POSIX thread that runs a body once; `join()` waits for it to end (and is safe to call more than once).
///
/// The body travels to the thread as a retained box through pthread's `void *` argument and is taken back exactly
/// once on the new thread. Blocking network I/O belongs here, never on the concurrency pool.
final class MQTTNetworkThread: Sendable {
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// The pthread, until it has been joined.
    private let thread: Mutex<pthread_t?>

    /// Starts a thread named `name` (as `top -H` and `/proc/PID/task/TID/comm` show it: at most 15 bytes) running
    /// `body`; throws, naming `name`, if the system refuses a thread.
    init(name: String, _ body: @escaping @Sendable () -> Void) throws(MQTTError) {
        let threadName = String(name.utf8.prefix(15)) ?? "mqtt"
        let argument = Unmanaged.passRetained(
            Body {
                _ = beaconmesh_name_this_thread(threadName)
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
            throw .library(
                call: "pthread_create(\(name))", code: MOSQ_ERR_ERRNO.rawValue, systemError: code,
                reason: systemErrorText(code))
        }
        self.thread = Mutex(thread)
    }

    /// Waits until the thread has ended; later calls return at once. Never call it from the thread itself.
    func join() {
        guard
            let thread = self.thread.withLock({ value -> pthread_t? in
                defer { value = nil }
                return value
            })
        else { return }
        _ = pthread_join(thread, nil)
    }
}
