import BeaconMeshTesting
import Foundation
import Testing

/// `members forget` on a chain's PostgreSQL registry, then `members purge` as head office runs it (issue 37): once a
/// coordinator has announced `member-forgotten`, none of the member's values is left anywhere in PostgreSQL's data
/// directory — tables, indexes, statistics, the write-ahead log, the notification queue — nor in `pg_dump`.
@Suite("erasure on a chain's PostgreSQL registry", .serialized)
struct ChainErasureTests {
    static let secrets = ["zelda-unique-id", "Zelda Quintessa", "Yerba mate del sur", "Platinum-Quokka", "\(Mesh.uuid):1:9"]

    @Test(
        "a member with every kind of field, a visit, history, a promo firing and a check-in, forgotten and purged: the data directory and pg_dump hold nothing of her"
    )
    func forgottenAndPurgedLeavesNothing() async throws {
        let base = try await ChainInfrastructure.start(
            members: """
                id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt,tier
                ana,Ana Souza,Flat white,ibeacon:\(Mesh.uuid):1:1,,11,1763683200000,1735689600000,Gold
                \(Self.secrets[0]),\(Self.secrets[1]),\(Self.secrets[2]),ibeacon:\(Self.secrets[4]),,3,,,\(Self.secrets[3])
                """,
            filters: ["beaconmesh/v1/stores/+/events", "beaconmesh/v1/registry/events"])
        let coordinator = try await base.startCoordinator(
            name: "store-1",
            config: base.storeOneConfig(
                top: ["promos: {dwell: 1s, cooldown: 24h}"],
                store: [
                    "greeting: \"Welcome back, {name}!\"", "departments:",
                    "  - {id: 10, name: Clothing, till: true, promo: {id: shirts, title: \"Shirts\", message: \"10 off\"}}",
                ]))
        // She visits Clothing: greeted, offered the promo, checked in at the till, then leaves.
        let heard = Task {
            try? await TopicPublisher.paced(
                port: base.broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings", count: 16,
                every: .milliseconds(250)
            ) { index in
                Mesh.batch(store: 1, department: 10, boot: "erasure", seq: index + 1, minor: 9, at: Mesh.nowMilliseconds)
            }
        }
        #expect(await eventually(timeout: .seconds(10)) { !base.events("arrived").isEmpty }, "\(coordinator.transcript)")
        try await MosquittoClients.publish(
            port: base.broker.port, topic: "beaconmesh/v1/stores/1/checkins",
            string: #"{"v":1,"id":"r1","member":"\#(Self.secrets[0])","department":10,"till":"till-1","at":\#(Mesh.nowMilliseconds)}"#,
            qos: 1)
        #expect(
            await eventually(timeout: .seconds(10)) { !base.events("promo").isEmpty && !base.events("checkin").isEmpty },
            "\(base.watch.lines)")
        await heard.value
        #expect(await eventually(timeout: .seconds(15)) { !base.events("left").isEmpty })
        let database = String(base.url.split(separator: "/").last ?? "")
        let historyWritten = await eventually(timeout: .seconds(15), interval: .milliseconds(250)) {
            let count = try? base.server.psql("SELECT count(*) FROM visit_history WHERE left_at IS NOT NULL", database: database)
            return count.map { !$0.hasPrefix("0") } == true
        }
        #expect(historyWritten, "her visit's history is written when she leaves")
        let data = base.server.directory + "/data"
        #expect(try await Self.found(Self.secrets, in: data).isEmpty == false, "written before she is forgotten")

        try await ChainInfrastructure.members(["forget", Self.secrets[0]], base.url)
        let announced = await eventually(timeout: .seconds(10)) {
            base.watch.lines.contains { $0.contains("member-forgotten") && $0.contains(Self.secrets[0]) }
        }
        #expect(announced, "\(base.watch.lines)")
        let outboxEmpty = await eventually(timeout: .seconds(10), interval: .milliseconds(250)) {
            (try? base.server.psql("SELECT count(*) FROM registry_event", database: database))?.hasPrefix("0") == true
        }
        #expect(outboxEmpty, "the coordinator deletes the published event")
        let purge = try await ChainInfrastructure.members(["purge"], base.url)
        #expect(purge.stdoutLines.last?.hasPrefix("purged: nothing") == true, "\(purge.transcript)")

        let left = try await Self.found(Self.secrets, in: data)
        #expect(left.isEmpty, "left in the data directory: \(left)")
        let dump = try base.server.dumpData(database: database)
        #expect(Self.secrets.allSatisfy { !dump.contains($0) } && dump.contains("Ana Souza"), "pg_dump --data-only")
        #expect(base.watch.lines.filter { $0.contains("member-forgotten") }.count == 1)
        await base.stop([coordinator])
    }

    /// The files of `folder` (recursively, read as bytes, as `strings` would) holding any of `values`, with the value.
    private static func found(_ values: [String], in folder: String) async throws -> [String] {
        var hits: [String] = []
        for value in values {
            let grep = try TestProcess(executable: "/usr/bin/grep", arguments: ["-r", "-a", "-l", "-F", "-e", value, folder])
            let status = await grep.waitForExit(timeout: .seconds(60))
            guard status == .exited(0) || status == .exited(1) else { throw TestSupportError("grep: \(grep.transcript)") }
            hits += grep.stdoutLines.map { "\(value) in \($0.replacingOccurrences(of: folder + "/", with: ""))" }
        }
        return hits
    }
}
