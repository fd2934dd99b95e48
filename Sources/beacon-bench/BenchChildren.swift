import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The programs a benchmark has started and not yet stopped; a SIGTERM, SIGINT or SIGHUP to the benchmark (Ctrl-C,
/// `timeout`, a closed terminal) stops them too, so that no broker or coordinator outlives it.
///
/// On one of those signals every registered child gets SIGTERM, then SIGKILL if it is still there after two
/// seconds, and the benchmark exits with 128 + the signal's number, as a shell reports a process killed by it.
enum BenchChildren {
    private static let running = Mutex<Set<pid_t>>([])

    /// Installs the signal handling (once); call it before starting a child.
    static func prepare() {
        _ = signalHandling
    }

    /// Registers a started child.
    static func add(_ pid: pid_t) {
        prepare()
        running.withLock { _ = $0.insert(pid) }
    }

    /// Forgets a child that has been stopped.
    static func remove(_ pid: pid_t) {
        running.withLock { _ = $0.remove(pid) }
    }

    /// Installs a dispatch source per signal, kept for the life of the process; the signals' default actions are
    /// turned off so only these run.
    private static let signalHandling: Void = {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stopAllAndExit(signal: number) }
            source.resume()
            _ = Unmanaged.passRetained(source as AnyObject)
        }
    }()

    private static func stopAllAndExit(signal number: Int32) -> Never {
        let children = running.withLock { $0 }
        for pid in children { kill(pid, SIGTERM) }
        var deadline = 200  // × 10 ms
        while deadline > 0 && children.contains(where: { kill($0, 0) == 0 && !isZombie($0) }) {
            usleep(10_000)
            deadline -= 1
        }
        for pid in children where kill(pid, 0) == 0 && !isZombie(pid) { kill(pid, SIGKILL) }
        exit(128 + number)
    }

    /// Whether `pid` has exited and only waits to be reaped (state `Z` in /proc/PID/stat).
    private static func isZombie(_ pid: pid_t) -> Bool {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return true }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 512)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return true }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let end = text.lastIndex(of: ")") else { return false }
        return text[text.index(after: end)...].dropFirst().first == "Z"
    }
}
