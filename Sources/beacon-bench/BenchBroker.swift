import Foundation

/// The mosquitto one benchmark runs against: in the benchmark's work folder, on a free loopback port, anonymous, no
/// log, Nagle's algorithm off, plus the benchmark's own `settings`; running once it accepts connections.
struct BenchBroker {
    let process: BenchProcess
    let port: Int

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// No limit on queued or in-flight messages: a backlog must reach the consumers whole.
    static let unlimited = ["max_queued_messages 0", "max_inflight_messages 0"]

    static func start(in work: String, settings: [String]) async throws -> BenchBroker {
        let port = try BenchProcess.freePort()
        let lines = ["listener \(port) 127.0.0.1", "allow_anonymous true"] + settings + ["set_tcp_nodelay true", "log_dest none"]
        try (lines.joined(separator: "\n") + "\n").write(toFile: work + "/mosquitto.conf", atomically: true, encoding: .utf8)
        let process = try BenchProcess(BenchProcess.which("mosquitto"), ["-c", work + "/mosquitto.conf"])
        do {
            try await BenchProcess.waitForPort(port)
        } catch {
            process.stop()
            throw error
        }
        return BenchBroker(process: process, port: port)
    }

    /// A `mosquitto_sub` writing what `topic` carries (QoS 1) into `file`, a line per message as each arrives;
    /// subscribed (300 ms given to it) when this returns.
    func record(_ topic: String, into file: String) async throws -> BenchProcess {
        let subscriber = try BenchProcess(
            "/bin/sh",
            ["-c", "exec stdbuf -oL \(try BenchProcess.which("mosquitto_sub")) -h 127.0.0.1 -p \(port) -q 1 -t '\(topic)' > '\(file)'"])
        try await Task.sleep(for: .milliseconds(300))
        return subscriber
    }
}
