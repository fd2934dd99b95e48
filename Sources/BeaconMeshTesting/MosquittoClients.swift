import Foundation
import Synchronization

/// The real `mosquitto_pub` and `mosquitto_sub` command line clients, for interoperability tests.
public enum MosquittoClients {
    /// Publishes one message with `mosquitto_pub` to the broker on 127.0.0.1:`port` and waits until it has exited 0.
    ///
    /// `extraArguments` are passed through (e.g. `["--will-topic", …]`, `["-i", "id"]`). Throws with the tool's output
    /// when it fails or does not finish within `timeout`.
    public static func publish(
        port: Int, topic: String, payload: [UInt8], qos: Int = 0, retain: Bool = false,
        extraArguments: [String] = [], timeout: Duration = .seconds(10)
    ) async throws {
        // A file carries any bytes, including NUL; `-m` could not.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-pub-\(UUID().uuidString)")
        try Data(payload).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-q", "\(qos)", "-f", file.path]
        if retain { arguments.append("-r") }
        arguments += extraArguments
        let process = try TestProcess(executable: try executable("mosquitto_pub"), arguments: arguments)
        let status = await process.waitForExit(timeout: timeout)
        guard status == .exited(0) else {
            if status == nil { process.send(SIGKILL) }
            throw TestSupportError(
                "mosquitto_pub \(arguments.joined(separator: " ")) \(status.map { "\($0)" } ?? "did not finish"):\n\(process.transcript)")
        }
    }

    /// Publishes a UTF-8 string with `mosquitto_pub`; see `publish(port:topic:payload:…)`.
    public static func publish(
        port: Int, topic: String, string: String, qos: Int = 0, retain: Bool = false,
        extraArguments: [String] = [], timeout: Duration = .seconds(10)
    ) async throws {
        try await publish(
            port: port, topic: topic, payload: Array(string.utf8), qos: qos, retain: retain,
            extraArguments: extraArguments, timeout: timeout)
    }

    /// Starts `mosquitto_sub` on `filters` and returns once the broker has acknowledged the subscription.
    ///
    /// Each received message becomes one line of `Subscription.lines`: `topic payload` by default (`-v`), or as
    /// `format` says (`mosquitto_sub -F`, e.g. `"%r %q %t %p"` for retained flag, QoS, topic, payload).
    public static func subscribe(
        port: Int, filters: [String], qos: Int = 0, format: String? = nil,
        extraArguments: [String] = [], timeout: Duration = .seconds(10)
    ) async throws -> Subscription {
        var arguments = ["-d", "-h", "127.0.0.1", "-p", "\(port)", "-q", "\(qos)"]
        for filter in filters { arguments += ["-t", filter] }
        if let format { arguments += ["-F", format] } else { arguments.append("-v") }
        arguments += extraArguments
        // stdbuf -oL: mosquitto_sub only flushes stdout after a message, so its debug lines (the SUBACK we wait for)
        // would otherwise sit in its buffer.
        let process = try TestProcess(
            executable: "/usr/bin/stdbuf", arguments: ["-oL", try executable("mosquitto_sub")] + arguments)
        let subscription = Subscription(process: process)
        guard await process.waitForLine(in: .stdout, timeout: timeout, where: { $0.contains("received SUBACK") }) != nil else {
            await process.stop(with: SIGKILL)
            throw TestSupportError(
                "mosquitto_sub \(arguments.joined(separator: " ")) did not subscribe within \(timeout):\n\(process.transcript)")
        }
        return subscription
    }

    /// Starts `mosquitto_sub` on one filter; see `subscribe(port:filters:…)`.
    public static func subscribe(
        port: Int, filter: String, qos: Int = 0, format: String? = nil,
        extraArguments: [String] = [], timeout: Duration = .seconds(10)
    ) async throws -> Subscription {
        try await subscribe(
            port: port, filters: [filter], qos: qos, format: format,
            extraArguments: extraArguments, timeout: timeout)
    }

    /// The path of `mosquitto_pub` or `mosquitto_sub`; throws saying what to install when missing.
    public static func executable(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/\(name)" } + ["/usr/bin/\(name)", "/usr/local/bin/\(name)"]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return found
        }
        throw TestSupportError("\(name) was not found on PATH; install it (apt-get install mosquitto-clients)")
    }
}

/// A running `mosquitto_sub`: the messages it printed so far, a way to wait for one, and `stop()`.
public final class Subscription: Sendable {
    /// The `mosquitto_sub` process (its full output, including debug lines, is in `process.stdoutLines`).
    public let process: TestProcess

    init(process: TestProcess) {
        self.process = process
    }

    /// The message lines printed so far (debug lines left out), in arrival order.
    public var lines: [String] {
        process.stdoutLines.filter { !Self.isDebugLine($0) }
    }

    /// Waits for a message line satisfying `predicate`; `nil` after `timeout`.
    public func waitForLine(timeout: Duration = .seconds(10), where predicate: @escaping @Sendable (String) -> Bool) async -> String? {
        await process.waitForLine(in: .stdout, timeout: timeout) { !Self.isDebugLine($0) && predicate($0) }
    }

    /// Stops `mosquitto_sub` (SIGTERM, then SIGKILL if needed) and waits for it to exit.
    public func stop() async {
        await process.stop(with: SIGTERM, timeout: .seconds(5))
    }

    /// `mosquitto_sub -d` prints its protocol log on stdout: `Client … sending …`, `Subscribed (mid: 1): 0`.
    private static func isDebugLine(_ line: String) -> Bool {
        (line.hasPrefix("Client ") && (line.contains(" sending ") || line.contains(" received ")))
            || line.hasPrefix("Subscribed (mid:")
    }
}
