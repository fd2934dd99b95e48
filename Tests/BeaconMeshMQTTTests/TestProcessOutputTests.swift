import BeaconMeshTesting
import Foundation
import Synchronization
import Testing

/// `TestProcess` under load: it spins threads on every core, so `deploy/run-tests.sh` runs it with the load suites,
/// one at a time.
@Suite("Test process output under load", .timeLimit(.minutes(3)))
struct TestProcessOutputTests {
    @Test("everything written before the exit is collected by the time waitForExit returns, even on a busy machine")
    func outputCompleteAtExit() async throws {
        // A program that writes its errors and exits at once: its last lines may still be in the pipe when the exit
        // is reaped. Threads spinning on every core make the readers lag, as a loaded CI machine does.
        let spinning = Atomic(true)
        for _ in 0..<2 * ProcessInfo.processInfo.activeProcessorCount {
            Thread { while spinning.load(ordering: .relaxed) {} }.start()
        }
        defer { spinning.store(false, ordering: .relaxed) }
        let script = "i=0; while [ $i -lt 300 ]; do echo \"error $i\" >&2; i=$((i+1)); done; exit 2"
        for _ in 0..<60 {
            let process = try TestProcess(executable: "/bin/sh", arguments: ["-c", script])
            #expect(await process.waitForExit() == .exited(2))
            let lines = process.stderrLines
            #expect(lines.count == 300, "\(lines.count) of 300 lines when the exit was reported")
        }
    }
}
