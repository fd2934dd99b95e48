import Foundation

/// One long-lived `mosquitto_pub -l` publishing each line the test sends as a message to one topic: what a simulated
/// node of an end-to-end test publishes its batches through (issue 53: a `mosquitto_pub` spawned per batch, its
/// `sentAt` stamped before the spawn, made a member's batches arrive late under load, and she left early).
public final class TopicPublisher: Sendable {
    public let topic: String
    private let process: TestProcess

    /// Starts `mosquitto_pub` on `topic` of the broker on 127.0.0.1:`port` and returns once the broker has accepted
    /// its connection. `extraArguments` are passed through (e.g. a login).
    public init(port: Int, topic: String, qos: Int = 1, extraArguments: [String] = [], timeout: Duration = .seconds(10)) async throws {
        let arguments = ["-d", "-l", "-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-q", "\(qos)"] + extraArguments
        // stdbuf -oL: the CONNACK line waited for would otherwise sit in mosquitto_pub's buffer.
        let process = try TestProcess(
            executable: "/usr/bin/stdbuf", arguments: ["-oL", try MosquittoClients.executable("mosquitto_pub")] + arguments,
            writableInput: true)
        guard await process.waitForLine(in: .stdout, timeout: timeout, where: { $0.contains("received CONNACK") }) != nil else {
            await process.stop(with: SIGKILL)
            throw TestSupportError(
                "mosquitto_pub \(arguments.joined(separator: " ")) did not connect within \(timeout):\n\(process.transcript)")
        }
        self.topic = topic
        self.process = process
    }

    /// Publishes `line` (one line: no newline in it) as one message now.
    public func send(_ line: String) throws {
        try process.write(line: line)
    }

    /// Ends the input and waits until `mosquitto_pub` has published everything sent and exited.
    public func stop(timeout: Duration = .seconds(10)) async {
        process.closeInput()
        if await process.waitForExit(timeout: timeout) == nil { await process.stop(with: SIGKILL) }
    }

    /// Publishes `count` lines to `topic` through one publisher, the line of each step made by `line` as it is sent
    /// (its index from 0), one every `interval`; returns once the broker has them all.
    public static func paced(
        port: Int, topic: String, count: Int, every interval: Duration, extraArguments: [String] = [],
        _ line: (Int) throws -> String
    ) async throws {
        let publisher = try await TopicPublisher(port: port, topic: topic, extraArguments: extraArguments)
        do {
            try await BeaconMeshTesting.paced(count, every: interval) { index in try publisher.send(try line(index)) }
        } catch {
            await publisher.stop()
            throw error
        }
        await publisher.stop()
    }
}
