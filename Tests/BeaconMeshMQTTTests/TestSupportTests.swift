import BeaconMeshTesting
import Foundation
import Testing

/// The fixtures other test targets rely on.
@Suite("Test support", .timeLimit(.minutes(1)))
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
        #expect(clock.now - started < .seconds(3))
        #expect(!broker.isRunning)
        #expect(!FreePort.isAccepting(port: port))
        try await broker.restart()
        #expect(broker.port == port && FreePort.isAccepting(port: port))
        #expect(broker.log.contains("mosquitto version"))
    }

    @Test("BuiltProducts finds the executables SwiftPM built next to the test bundle")
    func builtProducts() throws {
        let scanner = try BuiltProducts.path(of: "beacon-scanner")
        #expect(FileManager.default.isExecutableFile(atPath: scanner))
        #expect(throws: TestSupportError.self) { try BuiltProducts.path(of: "no-such-product") }
    }
}
