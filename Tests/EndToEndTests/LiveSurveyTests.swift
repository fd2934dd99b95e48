import BeaconMeshTesting
import Foundation
import Testing

/// Surveying a store live: a surveyor's beacon heard by real scanners, marks published on the store's survey topic,
/// the coordinator keeping samples in the registry.
@Suite("Survey, live, end to end", .serialized)
struct LiveSurveyTests {
    static let surveyor = "ibeacon:\(Mesh.uuid):7:0"

    /// What `survey show --json` says of store 1: seconds of samples by department.
    static func seconds(database: String) async throws -> [Int: Int] {
        let show = try Mesh.program("beacon-coordinator", ["survey", "show", "--store", "1", "--db", database, "--json"])
        #expect(await show.waitForExit(timeout: .seconds(30)) == .exited(0), "\(show.transcript)")
        let json = try #require(show.stdoutLines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        var seconds: [Int: Int] = [:]
        for entry in json["samples"] as? [[String: Any]] ?? [] {
            if let department = entry["department"] as? Int, let count = entry["seconds"] as? Int { seconds[department] = count }
        }
        return seconds
    }

    @Test(
        "a beacon heard by three scanners while marks name three departments in turn: samples for each within ±10 % of its marked seconds")
    func liveSurvey() async throws {
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: broker.url)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
        try #require(running != nil, "\(coordinator.transcript)")

        // The surveyor's beacon, five adverts a second for 80 s, heard by a node in each department.
        let capture = directory + "/surveyor.btsnoop"
        try SyntheticCapture.write(
            to: capture, adverts: 400, beacons: 1, major: 7, interval: .milliseconds(200),
            startMicroseconds: Mesh.nowMilliseconds * 1000)
        var scanners: [TestProcess] = []
        for department in [10, 20, 30] {
            scanners.append(
                try Mesh.program(
                    "beacon-scanner",
                    ["--store", "1", "--department", "\(department)", "--broker", broker.url, "--source", "btsnoop:\(capture)"]))
        }
        // The survey starts once each department's scanner has sent a batch.
        let sightings = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/1/departments/+/nodes/+/sightings", qos: 1)
        let heard = await eventually(timeout: .seconds(15), interval: .milliseconds(100)) {
            Set(sightings.lines.compactMap { Mesh.topic(of: $0).split(separator: "/").dropFirst(5).first }) == ["10", "20", "30"]
        }
        #expect(heard, "\(sightings.lines.prefix(3))\n\(scanners.map(\.transcript))")
        await sightings.stop()

        func mark(_ department: String) async throws {
            let body =
                department == "stop"
                ? "{\"v\":1,\"beacon\":\"\(Self.surveyor)\",\"department\":null,\"stop\":true,\"at\":\(Mesh.nowMilliseconds)}"
                : "{\"v\":1,\"beacon\":\"\(Self.surveyor)\",\"department\":\(department == "none" ? "null" : department),\"at\":\(Mesh.nowMilliseconds)}"
            try await MosquittoClients.publish(port: broker.port, topic: "beaconmesh/v1/stores/1/survey", string: body, qos: 1)
        }
        // A mark for a department the store does not have, and one with a malformed beacon key: dropped and counted.
        try await MosquittoClients.publish(
            port: broker.port, topic: "beaconmesh/v1/stores/1/survey",
            string: "{\"v\":1,\"beacon\":\"\(Self.surveyor)\",\"department\":99,\"at\":\(Mesh.nowMilliseconds)}", qos: 1)
        try await MosquittoClients.publish(
            port: broker.port, topic: "beaconmesh/v1/stores/1/survey",
            string: "{\"v\":1,\"beacon\":\"ibeacon:nope\",\"department\":10,\"at\":\(Mesh.nowMilliseconds)}", qos: 1)
        var marked: [Int: Duration] = [:]
        let clock = ContinuousClock()
        for (department, span) in [(10, 15), (20, 15), (30, 15)] {
            let started = clock.now
            try await mark("\(department)")
            try await Task.sleep(for: .seconds(span))
            try await mark("none")
            marked[department] = clock.now - started
            try await Task.sleep(for: .seconds(2))
        }
        try await mark("stop")
        // The last department's samples in the registry (kept about every second) before the coordinator stops.
        let last = Double(try #require(marked[30]).components.seconds)
        let written = await eventually(timeout: .seconds(15), interval: .milliseconds(500)) { () async -> Bool in
            Double((try? await Self.seconds(database: directory + "/mesh.sqlite"))?[30] ?? 0) >= last * 0.9
        }
        #expect(written, "\(coordinator.transcript)")
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        for scanner in scanners { _ = await scanner.stop(with: SIGTERM, timeout: .seconds(10)) }

        let seconds = try await Self.seconds(database: directory + "/mesh.sqlite")
        #expect(Set(seconds.keys) == [10, 20, 30], "\(seconds)\n\(coordinator.transcript)")
        for (department, span) in marked {
            let expected = Double(span.components.seconds) + Double(span.components.attoseconds) * 1e-18
            let got = Double(seconds[department] ?? 0)
            #expect(abs(got - expected) <= expected * 0.1, "department \(department): \(got) s of samples for \(expected) s marked")
        }
        #expect(coordinator.transcript.contains("unknown-department"), "\(coordinator.transcript)")
    }
}
