import BeaconMeshTesting
import Foundation
import Testing

/// `members forget` through the real programs on the embedded registry (issue 37): once the coordinator has
/// published `member-forgotten`, nothing of the member is left in the SQLite file or its write-ahead log, the id
/// included (it was left four times: in the member change log twice, in the outbox twice).
@Suite("erasure end to end")
struct ErasureEndToEndTests {
    @Test(
        "a member with a visit, history and a promo firing, forgotten: announced once; strings over the file and its log find nothing of her"
    )
    func forgottenLeavesNothing() async throws {
        let run = try await CoordinatorRun.start()
        let registry = try await MosquittoClients.subscribe(port: run.broker.port, filter: "beaconmesh/v1/registry/events", qos: 1)
        let database = run.directory + "/mesh.sqlite"
        let secrets = ["zelda-unique-id", "Zelda Quintessa", "Yerba mate del sur", "\(Mesh.uuid):1:9"]
        try await Self.members(
            ["add", secrets[0], "--name", secrets[1], "--drink", secrets[2], "--beacon", "ibeacon:\(secrets[3])"], database)
        // She visits Clothing long enough for its promo (dwell 1 s), then leaves: a visit, its history, a firing.
        #expect(await run.coordinator.readRegistryChange(changed: secrets[0]), "\(run.coordinator.transcript)")
        try await run.send(department: 10, minor: 9, from: 1, count: 10)
        #expect(await run.waitForEvent("arrived") != nil, "\(run.coordinator.transcript)")
        #expect(await run.waitForEvent("promo") != nil, "\(run.events.lines)")
        #expect(await run.waitForEvent("left", timeout: .seconds(15)) != nil)
        let written = await eventually(timeout: .seconds(10), interval: .milliseconds(250)) { () async -> Bool? in
            (try? await Self.strings(database))?.contains(secrets[0]) == true ? true : nil
        }
        #expect(written == true, "her history was written before she is forgotten")

        try await Self.members(["forget", secrets[0]], database)
        let announced = await registry.waitForLine(timeout: .seconds(10)) { $0.contains("member-forgotten") }
        #expect(announced?.contains(secrets[0]) == true, "\(registry.lines)")
        // The coordinator deletes the published event and empties the log; give it a moment, then look.
        let gone =
            await eventually(timeout: .seconds(10), interval: .milliseconds(250)) { () async -> Bool? in
                let text = (try? await Self.strings(database)) ?? secrets[0]
                return secrets.allSatisfy { !text.contains($0) } ? true : nil
            } ?? false
        let text = try await Self.strings(database)
        #expect(gone, "left behind: \(secrets.filter { text.contains($0) })")
        #expect(registry.lines.filter { $0.contains("member-forgotten") }.count == 1, "\(registry.lines)")
        // The coordinator knows she is gone: her fob is a guest's now. Snapshots count a guest in Clothing, then none
        // once the guest has gone: by then any greeting for the fob, published first, is on this subscription.
        let watch = try await MosquittoClients.subscribe(
            port: run.broker.port, filters: ["beaconmesh/v1/stores/1/events", "beaconmesh/v1/stores/1/presence"], qos: 1)
        try await run.send(department: 10, minor: 9, from: 11, count: 6)
        @Sendable func guests(_ line: String) -> Int? {
            guard line.contains("/presence ") else { return nil }
            let occupancy = Mesh.payload(of: line)?["occupancy"] as? [String: Any]
            return (occupancy?["10"] as? [String: Any])?["guests"] as? Int ?? 0
        }
        #expect(await watch.waitForLine(timeout: .seconds(10)) { (guests($0) ?? 0) >= 1 } != nil, "\(watch.lines)")
        let counted = watch.lines.count
        let guestGone = await eventually(timeout: .seconds(15)) { watch.lines.dropFirst(counted).contains { guests($0) == 0 } }
        #expect(guestGone, "\(watch.lines)")
        #expect(!watch.lines.contains { $0.contains(#""type":"arrived""#) }, "\(watch.lines)")
        #expect(run.events(ofType: "arrived").count == 1, "\(run.events.lines)")
        await watch.stop()
        await registry.stop()
        await run.stop()
    }

    private static func members(_ arguments: [String], _ database: String) async throws {
        let command = try Mesh.program("beacon-coordinator", ["members"] + arguments + ["--db", database])
        #expect(await command.waitForExit(timeout: .seconds(20)) == .exited(0), "\(command.transcript)")
    }

    /// What Debian's `strings` finds in the file and its write-ahead log, as a data-protection officer would look
    /// (awaited, not blocking a thread the other tests share).
    private static func strings(_ database: String) async throws -> String {
        var found: [String] = []
        for path in [database, database + "-wal"] where FileManager.default.fileExists(atPath: path) {
            let strings = try TestProcess(executable: "/usr/bin/strings", arguments: ["-n", "4", path])
            guard await strings.waitForExit(timeout: .seconds(30)) == .exited(0) else { throw TestSupportError(strings.transcript) }
            found += strings.stdoutLines
        }
        return found.joined(separator: "\n")
    }
}
