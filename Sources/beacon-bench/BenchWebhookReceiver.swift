import ArgumentParser
import BeaconMeshTesting
import Foundation

/// A webhook receiver of the tests' (answering 200 at once) in a process of its own, at idle priority
/// (`chrt --idle`): a stand-in
/// for a chain's CRM, which runs on another machine, so that in a benchmark of the coordinator it does not take the
/// coordinator's cores. `beacon-bench webhook-receiver --status-file F` (started by the benchmarks, not shown in help)
/// writes its URL and, every 100 ms, how many POSTs it received to F.
struct BenchWebhookReceiver: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook-receiver", abstract: "A webhook receiver for the benchmarks (their child process).",
        shouldDisplay: false)

    @Option(help: "The file the receiver's URL and its count of POSTs are written to (two lines).")
    var statusFile: String

    func run() throws {
        let statusFile = statusFile
        try BenchRun.blocking {
            let receiver = try await WebhookReceiver.start(certificates: nil)
            while true {
                try "\(receiver.url)\n\(receiver.count)\n".write(toFile: statusFile, atomically: true, encoding: .utf8)
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Starts the receiver at idle priority beside this `beacon-bench` and waits for its URL.
    static func start(in work: String, name: String) async throws -> (process: BenchProcess, url: String, posts: @Sendable () -> Int) {
        let status = work + "/\(name).status"
        let bench = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let process = try BenchProcess(BenchProcess.which("chrt"), ["--idle", "0", bench, "webhook-receiver", "--status-file", status])
        @Sendable func lines() -> [String] {
            ((try? String(contentsOfFile: status, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while lines().count < 2 {
            guard ContinuousClock.now < deadline, process.isRunning else { throw BenchError("the webhook receiver \(name) did not start") }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (process, lines()[0], { Int(lines().dropFirst().first ?? "") ?? 0 })
    }
}
