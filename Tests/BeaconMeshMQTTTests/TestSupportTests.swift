import BeaconMeshTesting
import Foundation
import Testing

/// The fixtures other test targets rely on.
@Suite("Test support", .timeLimit(.minutes(3)))
struct TestSupportTests {
    @Test("a child process gets SIGTERM (the test runner's blocked signal mask is not inherited)")
    func childrenReceiveSignals() async throws {
        let sleeper = try TestProcess(executable: "/bin/sleep", arguments: ["30"])
        sleeper.send(SIGTERM)
        #expect(await sleeper.waitForExit(timeout: .seconds(5)) == .signalled(SIGTERM))
    }

    @Test("stdout and stderr are collected line by line, and the exit status is reported")
    func collectsOutput() async throws {
        let shell = try TestProcess(
            executable: "/bin/sh", arguments: ["-c", "echo one; echo two >&2; printf 'partial'; exit 3"])
        #expect(await shell.waitForExit() == .exited(3))
        #expect(await shell.waitForLine(in: .stdout) { $0 == "partial" } != nil)
        #expect(shell.stdoutLines == ["one", "partial"])
        #expect(shell.stderrLines == ["two"])
    }

    @Test("a missing program is an error naming it")
    func missingProgram() {
        #expect(throws: TestSupportError.self) {
            try TestProcess(executable: "/nonexistent/beacon-scanner")
        }
    }

    @Test("the broker stops promptly on SIGTERM and restarts on the same port")
    func brokerStopAndRestart() async throws {
        let broker = try await MosquittoBroker.start()
        let port = broker.port
        let clock = ContinuousClock()
        let started = clock.now
        await broker.stop()
        // SIGTERM ended it (it says so in its log), not the SIGKILL that follows 10 s later: a time bound alone
        // failed under load (3.2 s for a 3-s bound while 600 tests ran).
        #expect(broker.log.contains("terminating"), "\(broker.log)")
        #expect(clock.now - started < .seconds(10))
        #expect(!broker.isRunning)
        #expect(!FreePort.isAccepting(port: port))
        try await broker.restart()
        #expect(broker.port == port && FreePort.isAccepting(port: port))
        #expect(broker.log.contains("mosquitto version"))
    }

    @Test("FreePort never hands the same port to two callers in one test process")
    func freePortsAreDistinct() throws {
        let ports = try (0..<3000).map { _ in try FreePort.next() }
        #expect(Set(ports).count == ports.count)
    }

    @Test("a listener behind a hundred others is seen listening: /proc/net/tcp is read to its end, not its first page")
    func listenerBehindManyOthers() throws {
        let crowd = try (0..<100).map { _ in try LoopbackListener() }
        defer { crowd.forEach { $0.close() } }
        let last = try LoopbackListener()
        defer { last.close() }
        #expect(FreePort.isListening(port: last.port, processID: getpid()))
        #expect(crowd.allSatisfy { FreePort.isListening(port: $0.port, processID: getpid()) })
    }

    @Test("a broker whose port another program listens on fails to start, saying so, instead of looking ready")
    func brokerOnATakenPortDoesNotLookReady() async throws {
        let squatter = try LoopbackListener()
        defer { squatter.close() }
        #expect(FreePort.isAccepting(port: squatter.port))
        #expect(!FreePort.isListening(port: squatter.port, processID: getpid() + 1_000_000))
        #expect(FreePort.isListening(port: squatter.port, processID: getpid()))
        let broker = try MosquittoBroker(port: squatter.port)
        await #expect {
            try await broker.start(timeout: .seconds(5))
        } throws: { error in
            "\(error)".contains("did not listen on 127.0.0.1:\(squatter.port)")
        }
        #expect(!broker.isRunning)
    }

    @Test("BuiltProducts finds the executables SwiftPM built next to the test bundle")
    func builtProducts() throws {
        let scanner = try BuiltProducts.path(of: "beacon-scanner")
        #expect(FileManager.default.isExecutableFile(atPath: scanner))
        #expect(throws: TestSupportError.self) { try BuiltProducts.path(of: "no-such-product") }
    }
}

/// A TCP socket listening on a free 127.0.0.1 port in this process, standing in for another program that took it.
private struct LoopbackListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        // Close-on-exec, as another program's socket would be: the broker must not inherit it.
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 8) == 0 else {
            throw TestSupportError("could not listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}
