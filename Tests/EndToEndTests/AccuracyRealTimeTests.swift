import BeaconMeshTesting
import Foundation
import Testing

/// The scoreboard tells the truth: a labelled recording replayed at recorded pace through real scanner processes,
/// mosquitto and the coordinator gives the figures `beacon-bench accuracy score` computes in virtual time.
@Suite("Presence accuracy in real time")
struct AccuracyRealTimeTests {
    static let beacon = "ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:100:1"

    /// Both walks' preparations (converting the recordings, the surveyed store's `survey import` of the other eight
    /// walks and `survey fit`, and both scoreboards, on both cores) come first; then the two replays run side by
    /// side, each with its own broker, coordinator and four scanners. A replay whose start met the other's
    /// preparations was seen to score 13 points low (0.548 against 0.679): load as its scanners start bends a walk.
    @Test(
        "two 84-s walks past 4 department radios at recorded pace, side by side: one in a plain store, one in a store surveyed by `survey import` of the other eight walks and `survey fit`; each within 2 changes of its scoreboard and 5 points of seconds right (the surveyed one 8)"
    )
    func realTimeMatchesScoreboard() async throws {
        let directory = try Mesh.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recordings = try await Self.convert(into: directory)
        let recording = recordings.first { $0.hasSuffix("rectangular_without_rotation-pi") }!
        let walks = recordings.filter { $0 != recording }
        #expect(walks.count == 8)
        let plainStore = directory + "/plain"
        let surveyedStore = directory + "/surveyed"
        for store in [plainStore, surveyedStore] {
            try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        }
        let plainScore = try await Self.scoreboard(["accuracy", "score", recording], decider: "BeaconMesh")
        let database = surveyedStore + "/mesh.sqlite"
        for walk in walks {
            let imported = try Mesh.program("beacon-coordinator", ["survey", "import", walk, "--store", "1", "--db", database])
            #expect(await imported.waitForExit(timeout: .seconds(60)) == .exited(0), "\(imported.transcript)")
        }
        let fit = try Mesh.program("beacon-coordinator", ["survey", "fit", "--store", "1", "--db", database])
        #expect(await fit.waitForExit(timeout: .seconds(60)) == .exited(0), "\(fit.transcript)")
        let surveyedScore = try await Self.scoreboard(
            ["accuracy", "score"] + walks.flatMap { ["--survey", $0] } + [recording], decider: "BeaconMesh, surveyed")

        async let plainReplay = Self.replay(recording, in: plainStore)
        async let surveyedReplay = Self.replay(recording, in: surveyedStore, surveyed: true)
        let (plain, surveyed) = try await (plainReplay, surveyedReplay)
        print(
            "plain, real time: \(plain.right) right, \(plain.moves) moves; scoreboard: \(plainScore.right) right, \(plainScore.changes) changes"
        )
        print(
            "surveyed, real time: \(surveyed.right) right, \(surveyed.moves) moves; scoreboard: \(surveyedScore.right) right, \(surveyedScore.changes) changes"
        )
        #expect(abs(plain.right - plainScore.right) <= 0.05, "plain: real time \(plain.right), scoreboard \(plainScore.right)")
        #expect(abs(plain.moves - plainScore.changes) <= 2, "plain: real time \(plain.moves) moves, scoreboard \(plainScore.changes)")
        // The surveyed walk's decisions flap (issue 51: a change every few seconds on one radio per department), so
        // when each batch arrives moves its seconds right more than the plain walk's: 0.357, 0.393 and 0.476 in three
        // runs here against the scoreboard's 0.417 (the plain walk: 0.679 each time). Within 8 points until 51 lands.
        #expect(
            abs(surveyed.right - surveyedScore.right) <= 0.08, "surveyed: real time \(surveyed.right), scoreboard \(surveyedScore.right)")
        #expect(
            abs(surveyed.moves - surveyedScore.changes) <= 2,
            "surveyed: real time \(surveyed.moves) moves, scoreboard \(surveyedScore.changes)")
    }

    /// The philotuxo walks converted with one radio per department into `directory`; their folders.
    static func convert(into directory: String) async throws -> [String] {
        let tracks = try FileManager.default.contentsOfDirectory(
            atPath: try SharedTestData.accuracyDirectory().appendingPathComponent("philotuxo__Position-Annotated-BLE-RSSI-Dataset/trk").path
        ).filter { $0.hasSuffix("_all_sensors.mbd") }.sorted().map {
            try! SharedTestData.accuracyDirectory().appendingPathComponent("philotuxo__Position-Annotated-BLE-RSSI-Dataset/trk/\($0)").path
        }
        let convert = try Mesh.program(
            "beacon-bench", ["accuracy", "convert", "philotuxo", "--radios", "pi"] + tracks + ["--to", directory])
        #expect(await convert.waitForExit(timeout: .seconds(60)) == .exited(0), "\(convert.transcript)")
        return try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("philotuxo-") }.sorted()
            .map { directory + "/" + $0 }
    }

    /// The scoreboard's seconds right and changes of `decider`, in virtual time.
    static func scoreboard(_ arguments: [String], decider: String) async throws -> (right: Double, changes: Int) {
        let score = try Mesh.program("beacon-bench", arguments)
        #expect(await score.waitForExit(timeout: .seconds(120)) == .exited(0), "\(score.transcript)")
        let row = try #require(score.stdoutLines.first { $0.contains("| \(decider) |") }, "\(score.transcript)")
        let fields = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        let right = try #require(Double(fields[3].replacingOccurrences(of: " %", with: ""))) / 100
        return (right, try #require(Int(fields[6].prefix { $0 != " " })))
    }

    /// `recording` replayed at recorded pace through real scanners, mosquitto and a coordinator on
    /// `directory/mesh.sqlite` (the store's files go in `directory`): the share of seconds its snapshots placed the
    /// walker right, and its moves.
    static func replay(_ recording: String, in directory: String, surveyed: Bool = false) async throws -> (right: Double, moves: Int) {
        // The same recording through the real programs, at recorded pace.
        let layout = try String(contentsOfFile: recording + "/layout.csv", encoding: .utf8).split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",").map(String.init) }
        let truth = try String(contentsOfFile: recording + "/truth.csv", encoding: .utf8).split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",").map(String.init) }
            .map { (from: Int64($0[1])!, to: Int64($0[2])!, department: Int($0[3])!) }
        let broker = try await MosquittoBroker.start()
        defer { Task { await broker.stop() } }
        try "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\nperson-1,Walker,,\(Self.beacon),,0,,\n"
            .write(toFile: directory + "/members.csv", atomically: true, encoding: .utf8)
        let departments = Set(layout.map { $0[1] }).sorted().map { "      - {id: \($0), name: Zone \($0)}" }.joined(separator: "\n")
        try """
        id: accuracy
        broker: {url: "\(broker.url)"}
        database: \(directory)/mesh.sqlite
        members: \(directory)/members.csv
        stores:
          - id: 1
            name: Office
            departments:
        \(departments)
        """.write(toFile: directory + "/coordinator.yaml", atomically: true, encoding: .utf8)
        let snapshots = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/1/presence", qos: 1)
        let events = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/stores/1/events", qos: 1)
        let statuses = try await MosquittoClients.subscribe(
            port: broker.port, filter: "beaconmesh/v1/stores/1/departments/+/nodes/+/status", qos: 1)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", directory + "/coordinator.yaml"])
        let running = await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") }
        try #require(running != nil, "\(coordinator.transcript)")
        // The scanners start their replays from one instant: each waits in a shell for the word, then becomes the
        // scanner (issue 53: started one after the other, their recordings drifted apart by the spawns between them).
        var scanners: [TestProcess] = []
        for node in layout {
            scanners.append(
                try TestProcess(
                    executable: "/bin/sh",
                    arguments: [
                        "-c", #"read go && exec "$0" "$@""#, try BuiltProducts.path(of: "beacon-scanner"),
                        "--store", "1", "--department", node[1], "--node", node[0], "--broker", broker.url, "--source",
                        "btsnoop:\(recording)/\(node[2])",
                    ], writableInput: true))
        }
        for scanner in scanners { try scanner.write(line: "go") }
        for scanner in scanners {
            #expect(await scanner.waitForExit(timeout: .seconds(150)) == .exited(0), "\(scanner.transcript)")
        }
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        await snapshots.stop()
        await events.stop()
        await statuses.stop()

        // Recording time → our time: each scanner replays from its start (its status's startedAt), and every capture
        // begins at the recording's first moment.
        let starts = statuses.lines.compactMap(Mesh.payload(of:)).filter { $0["state"] as? String == "online" }
            .compactMap { ($0["startedAt"] as? NSNumber)?.int64Value }
        try #require(Set(starts).count >= layout.count - 1, "\(statuses.lines)")
        #expect(starts.max()! - starts.min()! < 1_500, "the scanners started \(starts.max()! - starts.min()!) ms apart")
        let replayStart = starts.reduce(0, +) / Int64(starts.count)
        let recordingStart = truth.map(\.from).min()!
        var placements: [(at: Int64, department: Int?)] = []
        for snapshot in snapshots.lines.compactMap(Mesh.payload(of:)) {
            guard let at = (snapshot["updatedAt"] as? NSNumber)?.int64Value else { continue }
            let entry = (snapshot["members"] as? [[String: Any]] ?? []).first {
                ($0["member"] as? [String: Any])?["id"] as? String == "person-1"
            }
            placements.append((at, entry?["department"] as? Int))
        }
        placements.sort { $0.at < $1.at }
        var right = 0
        var scored = 0
        var second = recordingStart
        while second + 500 <= truth.map(\.to).max()! {
            let middle = second + 500
            if let actual = truth.first(where: { $0.from <= middle && middle < $0.to })?.department {
                let wall = replayStart + (middle - recordingStart)
                let decided = placements.last { $0.at <= wall }?.department ?? nil
                scored += 1
                if decided == actual { right += 1 }
            }
            second += 1000
        }
        // The replay ends as each scanner publishes `offline`, one after the other; the coordinator then moves the
        // member to the departments still heard. The scoreboard has no such end, so moves from then on do not count.
        let stream = events.lines.compactMap(Mesh.payload(of:))
        let replayEnd =
            stream.first { $0["type"] as? String == "node" && $0["state"] as? String == "offline" }
            .flatMap { ($0["at"] as? NSNumber)?.int64Value } ?? Int64.max
        let allMoves = stream.filter { $0["type"] as? String == "moved" }.count
        let moves = stream.filter {
            $0["type"] as? String == "moved" && ($0["at"] as? NSNumber)?.int64Value ?? Int64.max < replayEnd
        }.count
        #expect(scored >= 80)
        #expect(replayEnd < Int64.max, "no scanner went offline: \(events.lines)")
        print("moves with the replay's end: \(allMoves)")
        if surveyed {
            let reasons = stream.filter { $0["type"] as? String == "arrived" }.compactMap { $0["reason"] as? String }
            #expect(reasons.allSatisfy { $0.hasPrefix("survey: ") }, "\(reasons)")
        }
        return (Double(right) / Double(max(scored, 1)), moves)
    }
}
