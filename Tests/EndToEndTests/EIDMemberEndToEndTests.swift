import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshTesting
import Foundation
import Testing

/// A member whose loyalty fob speaks Eddystone-EID (issue 54): added with `members add --eid` under a secrets key,
/// her fob's frames for "now" replayed through the real `beacon-scanner` into the real coordinator, which alone
/// resolves them to her. Her identity key never shows in any output or in the registry file.
@Suite("Eddystone-EID members end to end", .serialized)
struct EIDMemberEndToEndTests {
    /// Ana's fob: identity key 10 11 … 1f, a new id every 4 s (K = 2), its counter started in late 2023.
    static let identityKey: [UInt8] = Array(0x10...0x1F)
    static let keyHex = identityKey.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    static let fobStart: Int64 = 1_700_000_000

    /// `beacon-coordinator members …` on `database`; its process, ended.
    static func members(_ arguments: [String], database: String) async throws -> TestProcess {
        let command = try Mesh.program("beacon-coordinator", ["members"] + arguments + ["--db", database])
        _ = await command.waitForExit(timeout: .seconds(20))
        return command
    }

    /// A capture of Ana's fob replayed from about `start` (Unix seconds) on: `seconds` of frames, 10 a second, each the
    /// id her fob advertises then.
    static func fobCapture(at path: String, from start: Double, seconds: Int, windowsAway: Int64 = 0) throws {
        let fob = try #require(EddystoneEID(identityKey: identityKey, rotationExponent: 2))
        let reports = (0..<(seconds * 10)).map { index -> (address: UInt64, data: [UInt8]) in
            let counter = Int64(start + Double(index) / 10) - fobStart + windowsAway * 4
            return (0xF0B0_0000_0001, SyntheticCapture.eddystoneEIDAdvert(ephemeralID: fob.ephemeralID(counter: UInt32(counter))))
        }
        try SyntheticCapture.write(to: path, reports: reports, rssi: -55)
    }

    /// A broker; a folder with a secrets key, the coordinator's config (`secretsKeyFile: secrets.key`) and its
    /// registry, where the real `members add` gave Ana her fob (its counter read "now").
    static func anaWithHerFob() async throws -> (broker: MosquittoBroker, folder: String, config: String, add: TestProcess) {
        let broker = try await MosquittoBroker.start()
        let folder = try Mesh.temporaryDirectory()
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: folder + "/secrets.key"))
        let config = try Mesh.writeCoordinatorConfig(in: folder, brokerURL: broker.url, extra: "secretsKeyFile: secrets.key")
        let counterNow = Int64(Date().timeIntervalSince1970) - fobStart
        let add = try await members(
            [
                "add", "ana", "--name", "Ana Souza", "--eid", keyHex + ":2", "--eid-counter", "\(counterNow)", "--secrets-key",
                folder + "/secrets.key",
            ], database: folder + "/mesh.sqlite")
        #expect(add.exitStatus == .exited(0), "\(add.transcript)")
        return (broker, folder, config, add)
    }

    @Test(
        "members add --eid under a secrets key; her fob replayed through a real scanner across two rotations greets her once, with no left until it stops; her key is in no output and not in the registry file"
    )
    func fobIsGreetedAcrossRotations() async throws {
        let (broker, folder, config, add) = try await Self.anaWithHerFob()
        let database = folder + "/mesh.sqlite"
        // `members list` shows her fob in a column of its own, not among her beacons.
        let list = try await Self.members(["list"], database: database)
        let row = list.stdoutLines.first { $0.hasPrefix("ana ") }?.split(separator: " ", omittingEmptySubsequences: true) ?? []
        #expect(row.suffix(3) == ["0", "eid", "K=2"], "\(list.transcript)")

        let events = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/#", qos: 1)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        // 10 s of her fob at -55 dBm: two or three ids, each its own window of 4 s.
        try Self.fobCapture(at: folder + "/fob.log", from: Date().timeIntervalSince1970 + 0.5, seconds: 10)
        try "store: 1\ndepartment: 10\n".write(toFile: folder + "/scanner.yaml", atomically: true, encoding: .utf8)
        let scanner = try Mesh.program(
            "beacon-scanner", ["--config", folder + "/scanner.yaml", "--broker", broker.url, "--source", "btsnoop:\(folder)/fob.log"])
        let arrived = await events.waitForLine(timeout: .seconds(10)) { $0.contains(#""type":"arrived""#) }
        #expect(arrived?.contains(#""id":"ana""#) == true, "\(events.lines)\n\(coordinator.transcript)")
        #expect(await scanner.waitForExit(timeout: .seconds(30)) == .exited(0), "\(scanner.transcript)")
        let left = await events.waitForLine(timeout: .seconds(10)) { $0.contains(#""type":"left""#) }
        #expect(left != nil, "\(events.lines)")
        let eventLines = events.lines.filter { $0.hasPrefix("beaconmesh/v1/stores/1/events ") }
        #expect(eventLines.filter { $0.contains(#""type":"arrived""#) }.count == 1, "\(eventLines)")
        #expect(eventLines.filter { $0.contains(#""type":"left""#) }.count == 1, "\(eventLines)")
        let heard = Set(
            events.lines.filter { $0.contains("/sightings ") }.flatMap { line in
                (Mesh.payload(of: line)?["sightings"] as? [[String: Any]] ?? []).compactMap { $0["beacon"] as? String }
            })
        #expect(heard.count >= 3, "the scanner heard her fob's rotating ids as they are: \(heard)")
        #expect(EventGrammar.violations(inLines: events.lines).isEmpty)

        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        await events.stop()
        await broker.stop()
        // Her key, in hex either case or as bytes, is nowhere: not in any line the programs or the broker carried, not
        // in the registry file (sealed under the secrets key).
        let outputs = [add.transcript, coordinator.transcript, scanner.transcript] + events.lines
        for output in outputs {
            #expect(!output.lowercased().contains(Self.keyHex), "the key in: \(output.prefix(300))")
        }
        let file = try Data(contentsOf: URL(fileURLWithPath: database))
        #expect(file.range(of: Data(Self.identityKey)) == nil && file.range(of: Data(Self.keyHex.utf8)) == nil)
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test(
        "a fob whose clock ran 200 s ahead is followed, and where it stands is kept in the registry: after a restart it resolves 450 s ahead (beyond the 5 minutes allowed around the registered counter)"
    )
    func followedOffsetSurvivesARestart() async throws {
        let (broker, folder, config, _) = try await Self.anaWithHerFob()
        let fob = try #require(EddystoneEID(identityKey: Self.identityKey, rotationExponent: 2))
        let health = try await MosquittoClients.subscribe(port: broker.port, filter: "beaconmesh/v1/coordinators/+/health", qos: 0)
        /// Her fob heard `ahead` seconds ahead of its registered counter, eight times over two seconds.
        func hear(ahead: Int64, boot: String) async throws {
            try await TopicPublisher.paced(
                port: broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings", count: 8,
                every: .milliseconds(250)
            ) { seq in
                let now = Mesh.nowMilliseconds
                let id = fob.beaconKey(counter: UInt32(now / 1000 - Self.fobStart + ahead))
                return Mesh.batch(store: 1, department: 10, boot: boot, seq: seq + 1, beacon: id.description, at: now)
            }
        }
        /// The `fobs` of the first health report after `mark` that counted `batches` batches.
        func fobs(after mark: Int, batches: Int) async -> [String: Any]? {
            let line = await eventually(timeout: .seconds(10)) {
                health.lines.dropFirst(mark).first { (Mesh.payload(of: $0)?["batches"] as? Int ?? 0) >= batches }
            }
            return line.flatMap { Mesh.payload(of: $0)?["fobs"] as? [String: Any] }
        }
        var coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config, "--health-interval", "1s"])
        #expect(await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        try await hear(ahead: 200, boot: "first")
        #expect(await fobs(after: 0, batches: 8)?["unresolved"] as? Int == 0, "\(health.lines.suffix(2))")
        // The offset moved 200 s: written at the next refresh (every 2 s for K = 2), then a clean stop.
        try await Task.sleep(for: .seconds(3))
        #expect(await coordinator.stop(with: SIGTERM, timeout: .seconds(10)) == .exited(0), "\(coordinator.transcript)")

        let mark = health.lines.count
        coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config, "--health-interval", "1s"])
        #expect(await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        try await hear(ahead: 450, boot: "second")
        #expect(await fobs(after: mark, batches: 8)?["unresolved"] as? Int == 0, "\(health.lines.suffix(2))\n\(coordinator.transcript)")
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        await health.stop()
        await broker.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test(
        "a recording of her fob replayed two hours later greets nobody (a guest in occupancy, never a guest visit); without the secrets key, or with another, the coordinator does not start"
    )
    func replayedRecordingAndWrongKeys() async throws {
        let (broker, folder, config, _) = try await Self.anaWithHerFob()
        let events = try await MosquittoClients.subscribe(
            port: broker.port,
            filters: ["beaconmesh/v1/stores/1/events", "beaconmesh/v1/stores/1/presence", "beaconmesh/v1/coordinators/+/health"], qos: 1)
        let coordinator = try Mesh.program("beacon-coordinator", ["run", "--config", config, "--health-interval", "1s"])
        #expect(await coordinator.waitForLine(in: .stderr, timeout: .seconds(15)) { $0.contains("coordinator running") } != nil)
        // Her fob's ids of two hours ago (1,800 windows back), replayed now.
        try Self.fobCapture(at: folder + "/old.log", from: Date().timeIntervalSince1970 - 7200, seconds: 4)
        try "store: 1\ndepartment: 10\n".write(toFile: folder + "/scanner.yaml", atomically: true, encoding: .utf8)
        let scanner = try Mesh.program(
            "beacon-scanner", ["--config", folder + "/scanner.yaml", "--broker", broker.url, "--source", "btsnoop:\(folder)/old.log"])
        #expect(await scanner.waitForExit(timeout: .seconds(30)) == .exited(0), "\(scanner.transcript)")
        @Sendable func guests(_ line: String) -> Int? {
            guard line.contains("/presence ") else { return nil }
            return ((Mesh.payload(of: line)?["occupancy"] as? [String: Any])?["10"] as? [String: Any])?["guests"] as? Int
        }
        #expect(await events.waitForLine(timeout: .seconds(10)) { (guests($0) ?? 0) >= 1 } != nil, "\(events.lines)")
        // Counted: health says how many sightings of EID ids resolved to nobody, beside the fobs it resolves.
        @Sendable func fobs(_ line: String) -> [String: Any]? {
            guard line.contains("/health ") else { return nil }
            return Mesh.payload(of: line)?["fobs"] as? [String: Any]
        }
        let counted = await events.waitForLine(timeout: .seconds(10)) { (fobs($0)?["unresolved"] as? Int ?? 0) >= 1 }
        #expect(counted.flatMap(fobs)?["count"] as? Int == 1, "\(events.lines.filter { $0.contains("/health ") }.suffix(2))")
        _ = await coordinator.stop(with: SIGTERM, timeout: .seconds(10))
        #expect(!events.lines.contains { $0.contains(#""type":"arrived""#) }, "\(events.lines)")
        await events.stop()

        // Without the secrets key, and with another: exit 2, one line, before anything is decided.
        _ = try Mesh.writeCoordinatorConfig(in: folder, brokerURL: broker.url, extra: "")
        let without = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await without.waitForExit(timeout: .seconds(15)) == .exited(2), "\(without.transcript)")
        #expect(
            without.stderrLines.count == 1 && without.stderrLines[0].contains("secretsKeyFile is needed"), "\(without.stderrLines)")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: folder + "/other.key"))
        _ = try Mesh.writeCoordinatorConfig(in: folder, brokerURL: broker.url, extra: "secretsKeyFile: other.key")
        let other = try Mesh.program("beacon-coordinator", ["run", "--config", config])
        #expect(await other.waitForExit(timeout: .seconds(15)) == .exited(2), "\(other.transcript)")
        #expect(other.stderrLines.count == 1 && other.stderrLines[0].contains("another key"), "\(other.stderrLines)")
        await broker.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test(
        "a malformed --eid, a K over 15 or no --secrets-key exits 2 naming the flag and never echoing the key",
        arguments: [
            (["--eid", String(keyHex.dropLast(2))], "--eid must be 32 hex digits"),
            (["--eid", keyHex + ":16", "--secrets-key", "/nonexistent"], "--eid must be 32 hex digits"),
            (["--eid", String(keyHex.dropLast()) + "g", "--secrets-key", "/nonexistent"], "--eid must be 32 hex digits"),
            (["--eid", keyHex], "--eid needs --secrets-key"),
            (["--eid", keyHex, "--secrets-key", "/nonexistent/secrets.key"], "--secrets-key /nonexistent/secrets.key cannot be read"),
            (["--eid-counter", "5"], "--eid-counter needs --eid"),
        ])
    func badFlags(arguments: [String], says: String) async throws {
        let folder = try Mesh.temporaryDirectory()
        let command = try await Self.members(["add", "ana", "--name", "Ana"] + arguments, database: folder + "/mesh.sqlite")
        #expect(command.exitStatus == .exited(2), "\(command.transcript)")
        let said = command.stderrLines.filter { !$0.hasPrefix("Usage:") && !$0.hasPrefix("  See") && !$0.isEmpty }
        #expect(said.count == 1 && said[0].contains(says), "\(command.stderrLines)")
        #expect(!command.transcript.lowercased().contains(String(Self.keyHex.prefix(20))), "\(command.transcript)")
        try? FileManager.default.removeItem(atPath: folder)
    }
}
