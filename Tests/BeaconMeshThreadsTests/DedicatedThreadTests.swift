import Foundation
import Synchronization
import Testing

@testable import BeaconMeshThreads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one thread type: it runs its body once on a thread of its own, under its name, and `join` waits for the end.
@Suite("Dedicated thread")
struct DedicatedThreadTests {
    /// The calling thread's name as the kernel shows it (`top -H`, `perf`).
    private static func currentThreadName() -> String {
        let descriptor = open("/proc/thread-self/comm", O_RDONLY)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self).trimmingNewline()
    }

    @Test("the body runs once on another thread, named, and join returns only after it has ended")
    func runsNamedAndJoins() throws {
        let seen = Mutex<(runs: Int, name: String, sameThread: Bool, ended: Bool)>((0, "", true, false))
        let caller = pthread_self()
        let thread = try DedicatedThread(name: "test-worker") {
            let name = DedicatedThreadTests.currentThreadName()
            let same = pthread_equal(pthread_self(), caller) != 0
            seen.withLock {
                $0.runs += 1
                $0.name = name
                $0.sameThread = same
            }
            usleep(100_000)
            seen.withLock { $0.ended = true }
        }
        thread.join()
        let after = seen.withLock { $0 }
        #expect(after.ended, "join returned before the body ended")
        #expect(after.runs == 1)
        #expect(after.name == "test-worker")
        #expect(!after.sameThread)
        thread.join()  // a second join returns at once
    }

    @Test("a name longer than the kernel keeps is cut to its first 15 bytes")
    func longNameIsCut() throws {
        let name = Mutex("")
        let thread = try DedicatedThread(name: "registry-poll-of-the-chain") {
            let seen = DedicatedThreadTests.currentThreadName()
            name.withLock { $0 = seen }
        }
        thread.join()
        #expect(name.withLock { $0 } == "registry-poll-o")
    }

    @Test("a body that joins its own thread (it asked its owner to stop) does not wait for itself")
    func joinFromItself() throws {
        let box = Mutex<DedicatedThread?>(nil)
        let ended = Atomic(false)
        let started = try DedicatedThread(name: "self-join") {
            var thread: DedicatedThread?
            while thread == nil {
                thread = box.withLock { $0 }
                if thread == nil { usleep(1_000) }
            }
            thread?.join()
            ended.store(true, ordering: .releasing)
        }
        box.withLock { $0 = started }
        // Ten seconds at most: the body would never end if a join from itself waited for itself.
        for _ in 0..<10_000 where !ended.load(ordering: .acquiring) { usleep(1_000) }
        let endedInTime = ended.load(ordering: .acquiring)
        #expect(endedInTime)
        started.join()  // detached by then: returns at once
    }

    @Test("a background thread runs at nice 10, a normal one as its starter; neither changes the starter")
    func backgroundYields() throws {
        @Sendable func nice() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
        let starter = nice()
        let seen = Mutex<(background: Int32, normal: Int32)>((-100, -100))
        try DedicatedThread(name: "background", priority: .background) {
            let value = nice()
            seen.withLock { $0.background = value }
        }.join()
        try DedicatedThread(name: "normal") {
            let value = nice()
            seen.withLock { $0.normal = value }
        }.join()
        let after = seen.withLock { $0 }
        #expect(after.background == max(starter, 10))
        #expect(after.normal == starter)
        #expect(nice() == starter)
    }

    @Test("an idle thread runs under SCHED_IDLE (and so does a library's thread that asks), its starter as it was")
    func idleRunsOnlyOnFreeCores() throws {
        // `/proc/thread-self/sched` names the policy: 0 normal, 5 SCHED_IDLE.
        @Sendable func policy() -> Int? {
            let text = (try? String(contentsOfFile: "/proc/thread-self/sched", encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("policy") }) else { return nil }
            return Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "")
        }
        let starter = policy()
        let seen = Mutex<(idle: Int?, asked: Int?)>((nil, nil))
        try DedicatedThread(name: "idle", priority: .idle) {
            let value = policy()
            seen.withLock { $0.idle = value }
        }.join()
        try DedicatedThread(name: "asks") {
            DedicatedThread.setCurrentThread(.idle)
            let value = policy()
            seen.withLock { $0.asked = value }
        }.join()
        #expect(starter == 0)
        #expect(seen.withLock { $0.idle } == 5)
        #expect(seen.withLock { $0.asked } == 5)
        #expect(policy() == starter)
    }

    @Test("a refusal to start names the thread and the system's reason")
    func startErrorSaysWhat() {
        let error = DedicatedThread.StartError(name: "mqtt-network", code: EAGAIN)
        #expect(error.description == "could not start the mqtt-network thread: \(String(cString: strerror(EAGAIN)))")
    }
}

extension String {
    fileprivate func trimmingNewline() -> String {
        hasSuffix("\n") ? String(dropLast()) : self
    }
}
