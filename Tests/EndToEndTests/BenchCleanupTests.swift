import BeaconMeshTesting
import Foundation
import Testing

/// `beacon-bench coordinator` starts a broker and a coordinator of its own; killing the benchmark stops them too.
@Suite("beacon-bench leaves nothing running", .serialized)
struct BenchCleanupTests {
    /// The processes whose parent is `parent`, with their command lines (from /proc).
    static func children(of parent: pid_t) -> [(pid: pid_t, command: String)] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> (pid_t, String)? in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            guard fields.count > 1, pid_t(fields[1]) == parent, fields[0] != "Z" else { return nil }
            let command =
                (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")))
                .map { String(decoding: $0.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self) } ?? ""
            return (pid, command)
        }
    }

    /// Whether process `pid` still exists and is not a zombie.
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].split(separator: " ").first != "Z"
    }

    @Test("SIGTERM or SIGINT to beacon-bench coordinator stops its mosquitto and beacon-coordinator", arguments: [SIGTERM, SIGINT])
    func killedBenchStopsItsChildren(signal: Int32) async throws {
        let bench = try Mesh.program("beacon-bench", ["coordinator", "--batches", "20000"])
        // Wait until both the broker and the coordinator run: the coordinator starts after the backlog is published
        // and drained by mosquitto_sub, which a debug build on a loaded 2-core machine once took over 30 s to do.
        let both = await eventually(timeout: .seconds(90), interval: .milliseconds(50)) { () -> [(pid: pid_t, command: String)]? in
            let now = Self.children(of: bench.processID)
            let hasBroker = now.contains { $0.command.contains("mosquitto") && $0.command.contains("beacon-bench-") }
            let hasCoordinator = now.contains { $0.command.contains("beacon-coordinator") }
            return hasBroker && hasCoordinator ? now : nil
        }
        guard let started = both else {
            bench.send(SIGKILL)
            Issue.record("beacon-bench never ran its broker and coordinator:\n\(bench.transcript)")
            return
        }
        bench.send(signal)
        let status = await bench.waitForExit(timeout: .seconds(10))
        #expect(status != nil, "beacon-bench did not exit after signal \(signal)")
        let left = await eventually(timeout: .seconds(5), interval: .milliseconds(50)) { () -> Bool? in
            started.allSatisfy { !Self.isAlive($0.pid) } ? true : nil
        }
        let survivors = started.filter { Self.isAlive($0.pid) }
        for survivor in survivors { kill(survivor.pid, SIGKILL) }
        #expect(left == true, "still running after beacon-bench was killed: \(survivors.map(\.command))")
    }
}
