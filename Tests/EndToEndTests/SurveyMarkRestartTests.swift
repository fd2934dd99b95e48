import BeaconMeshTesting
import Foundation
import Testing

/// A coordinator killed mid-survey: the store's holder kept the surveyor's mark in the registry, so after a restart it
/// samples the beacon on in the marked department without the surveyor marking again (issue 53 item 7; before, marks
/// lived in memory only and no sample came until the next mark).
@Suite("Survey marks across a restart, end to end", .serialized)
struct SurveyMarkRestartTests {
    @Test("kill -9 mid-survey and restart: samples go on in the marked department; a stop after the restart ends them")
    func restartMidSurvey() async throws {
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        let config = try Mesh.writeCoordinatorConfig(in: directory, brokerURL: broker.url)
        let database = directory + "/mesh.sqlite"
        func startCoordinator() async throws -> TestProcess {
            let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config])
            let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
            try #require(running != nil, "\(coordinator.transcript)")
            return coordinator
        }
        func seconds() async -> Int { (try? await LiveSurveyTests.seconds(database: database))?[10] ?? 0 }

        var coordinator = try await startCoordinator()
        // The surveyor's beacon, five adverts a second for 90 s, heard by the Clothing node.
        let capture = directory + "/surveyor.btsnoop"
        try SyntheticCapture.write(
            to: capture, adverts: 450, beacons: 1, major: 7, interval: .milliseconds(200),
            startMicroseconds: Mesh.nowMilliseconds * 1000)
        let scanner = try Mesh.program(
            "beacon-scanner", ["--store", "1", "--department", "10", "--broker", broker.url, "--source", "btsnoop:\(capture)"])
        defer { Task { _ = await scanner.stop(with: SIGTERM, timeout: .seconds(10)) } }
        func mark(_ department: String) async throws {
            let mark = try Mesh.program(
                "beacon-coordinator",
                [
                    "survey", "mark", "--store", "1", "--beacon", LiveSurveyTests.surveyor, "--department", department, "--broker",
                    broker.url,
                ])
            #expect(await mark.waitForExit(timeout: .seconds(15)) == .exited(0), "\(mark.transcript)")
        }
        try await mark("10")
        #expect(await eventually(timeout: .seconds(20), interval: .milliseconds(500)) { await seconds() >= 5 }, "\(coordinator.transcript)")

        coordinator.send(SIGKILL)
        _ = await coordinator.waitForExit()
        let beforeRestart = await seconds()
        coordinator = try await startCoordinator()
        let sampledOn = await eventually(timeout: .seconds(20), interval: .milliseconds(500)) { await seconds() >= beforeRestart + 5 }
        let afterRestart = await seconds()
        #expect(sampledOn, "\(beforeRestart) s before the restart, \(afterRestart) s after\n\(coordinator.transcript)")

        try await mark("stop")
        try await Task.sleep(for: .seconds(3))
        let stopped = await seconds()
        try await Task.sleep(for: .seconds(4))
        #expect(await seconds() <= stopped + 1, "no samples after the stop")
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
    }
}
