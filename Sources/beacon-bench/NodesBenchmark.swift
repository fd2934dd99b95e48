import ArgumentParser
import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Foundation
import Logging

/// Head office's fleet commands as a user runs them: `nodes set` on a store of real scanner processes, each node's
/// time to apply it; `nodes list` over a broker holding thousands of retained node statuses.
struct NodesBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nodes",
        abstract:
            "nodes set on --nodes real scanners (--source sim): time to apply, p50/p99; nodes list over --statuses retained statuses.",
        discussion: """
            Starts mosquitto on a free loopback port and --nodes beacon-scanner processes of store 1 (departments 1…N, \
            --source sim), then runs `beacon-coordinator nodes set --store 1 rssiAdjustment=R` --rounds times. A \
            mosquitto_sub stamps (%U, its clock) the retained config's arrival and each node's status saying it applied \
            that revision: a node's apply time is the gap between the two. Then it publishes --statuses retained \
            statuses of store 2 and times `beacon-coordinator nodes list --json` (the whole process) --repeats times, \
            checking it lists them all. Programs: those built next to beacon-bench (swift build -c release).
            """)

    @Option(help: "Scanner processes in the store.") var nodes = 100
    @Option(help: "nodes set rounds.") var rounds = 5
    @Option(help: "Retained node statuses nodes list reads (0: skip).") var statuses = 10_000
    @Option(help: "nodes list runs.") var repeats = 3

    func run() throws {
        guard nodes > 0, rounds > 0, statuses >= 0, repeats > 0 else { throw ValidationError("counts must be positive") }
        let benchmark = self
        try BenchRun.inWorkFolder { work in
            let broker = try await BenchBroker.start(in: work, settings: BenchBroker.unlimited + ["max_connections -1"])
            defer { broker.process.stop() }
            try await benchmark.measureSet(broker: broker, work: work)
            if benchmark.statuses > 0 { try await benchmark.measureList(broker: broker, work: work) }
        }
    }

    private func measureSet(broker: BenchBroker, work: String) async throws {
        let file = work + "/fleet.txt"
        let subscriber = try BenchProcess(
            "/bin/sh",
            [
                "-c",
                "exec stdbuf -oL \(try BenchProcess.which("mosquitto_sub")) -h 127.0.0.1 -p \(broker.port) -q 1 -F '%U %t %p' -t 'beaconmesh/v1/stores/1/nodes/config' -t 'beaconmesh/v1/stores/1/departments/+/nodes/+/status' > '\(file)'",
            ])
        defer { subscriber.stop() }
        try await Task.sleep(for: .milliseconds(300))
        let scanner = BenchProcess.besideBench("beacon-scanner")
        var scanners: [BenchProcess] = []
        defer { for process in scanners { process.stop() } }
        for department in 1...nodes {
            scanners.append(
                try BenchProcess(
                    scanner,
                    [
                        "--store", "1", "--department", "\(department)", "--source", "sim", "--broker", broker.url, "--log-level", "error",
                    ]))
        }
        let started = Measure.seconds()
        while Self.onlineNodes(in: file) < nodes {
            guard Measure.seconds() - started < 120 else {
                throw BenchError("only \(Self.onlineNodes(in: file)) of \(nodes) scanners came online")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        print("\(nodes) scanners online in \(String(format: "%.1f", Measure.seconds() - started)) s")
        var latencies: [Double] = []
        for round in 1...rounds {
            let begun = Measure.seconds()
            let status = try await Self.runCoordinator([
                "nodes", "set", "--broker", broker.url, "--store", "1", "rssiAdjustment=\(round % 2 == 0 ? -2 : 2)",
            ])
            let wall = Measure.seconds() - begun
            guard status == 0 else { throw BenchError("nodes set exited \(status) in round \(round)") }
            try await Task.sleep(for: .milliseconds(200))
            let applied = try Self.applyTimes(in: file, revision: round)
            guard applied.count == nodes else { throw BenchError("round \(round): \(applied.count) of \(nodes) nodes applied") }
            latencies += applied
            let sorted = applied.sorted()
            print(
                "round \(round): nodes set \(String(format: "%.2f", wall)) s (exit 0); applied by \(nodes) nodes: p50 \(Self.ms(sorted, 0.5)), p99 \(Self.ms(sorted, 0.99)), max \(Self.ms(sorted, 1))"
            )
        }
        let sorted = latencies.sorted()
        print("all rounds, \(sorted.count) applies: p50 \(Self.ms(sorted, 0.5)), p99 \(Self.ms(sorted, 0.99)), max \(Self.ms(sorted, 1))")
    }

    private func measureList(broker: BenchBroker, work: String) async throws {
        MQTTLibrary.initialize()
        var logger = Logger(label: "beacon-bench")
        logger.logLevel = .critical
        let client = try MQTTClient(
            configuration: MQTTConfiguration(broker: BrokerURL(broker.url)), logger: logger)
        try client.start()
        guard await client.waitUntilConnected(timeout: .seconds(10)) else { throw BenchError("cannot reach the broker") }
        let topics = Topics()
        for index in 0..<statuses {
            let address = NodeAddress(store: 2, department: UInt16(index / 10), node: "n\(index % 10)")!
            let status = NodeStatus(
                state: index % 7 == 0 ? .offline : .online, version: index % 3 == 0 ? "1.1.0" : "1.2.0", boot: "b\(index)",
                source: "hci0", startedAt: Timestamp(milliseconds: 1_763_769_600_000),
                config: NodeConfigReports(store: NodeConfigReport(revision: 3, state: .applied)))
            try client.publish(topic: topics.nodeStatus(address), payload: WireCodec.encode(status), qos: .atLeastOnce, retain: true)
            while client.unacknowledgedCount > 1_000 { try await Task.sleep(for: .milliseconds(5)) }
        }
        while client.unacknowledgedCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        await client.disconnect(timeout: .seconds(5), finalMessage: nil)
        for run in 1...repeats {
            let output = work + "/list.json"
            let begun = Measure.seconds()
            let status = try await Self.runCoordinator(
                ["nodes", "list", "--broker", broker.url, "--store", "2", "--json"], output: output)
            let wall = Measure.seconds() - begun
            let listed = (try? String(contentsOfFile: output, encoding: .utf8))?.components(separatedBy: "\"node\":\"n").count ?? 1
            guard status == 0, listed - 1 == statuses else {
                throw BenchError("nodes list exited \(status) listing \(listed - 1) of \(statuses)")
            }
            print("nodes list --json, \(statuses) retained statuses: \(String(format: "%.2f", wall)) s (run \(run), all listed)")
        }
    }

    /// Runs `beacon-coordinator` (next to beacon-bench) to its end; its exit status.
    static func runCoordinator(_ arguments: [String], output: String? = nil) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BenchProcess.besideBench("beacon-coordinator"))
        process.arguments = arguments
        if let output {
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.standardOutput = FileHandle(forWritingAtPath: output)
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        try process.run()
        while process.isRunning { try await Task.sleep(for: .milliseconds(5)) }
        return process.terminationStatus
    }

    /// How many distinct nodes' latest retained status in `file` says online.
    static func onlineNodes(in file: String) -> Int {
        let lines = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
        return Set(lines.filter { $0.contains("/status ") && $0.contains("\"online\"") }.map { $0.split(separator: " ")[1] }).count
    }

    /// Seconds from the arrival of config `revision` to each node's status applying it, by `mosquitto_sub`'s stamps.
    static func applyTimes(in file: String, revision: Int) throws -> [Double] {
        let lines = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
        guard
            let published = lines.first(where: { $0.contains("/nodes/config ") && $0.contains("\"revision\":\(revision),") })
                .flatMap({ Double($0.split(separator: " ")[0]) })
        else { throw BenchError("config revision \(revision) was never seen") }
        var applied: [Substring: Double] = [:]
        for line in lines where line.contains("/status ") && line.contains("\"store\":{\"revision\":\(revision),\"state\":\"applied\"") {
            let parts = line.split(separator: " ")
            if applied[parts[1]] == nil, let stamp = Double(parts[0]) { applied[parts[1]] = stamp - published }
        }
        return Array(applied.values)
    }

    static func ms(_ sorted: [Double], _ quantile: Double) -> String {
        guard !sorted.isEmpty else { return "-" }
        let index = min(sorted.count - 1, Int((Double(sorted.count) * quantile).rounded(.up)) - 1)
        return String(format: "%.0f ms", sorted[max(0, index)] * 1000)
    }
}
