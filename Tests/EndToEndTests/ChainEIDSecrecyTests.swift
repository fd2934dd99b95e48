import BeaconMeshCore
import BeaconMeshFobs
import BeaconMeshTesting
import Foundation
import Testing

/// A member's Eddystone-EID fob on a chain's PostgreSQL registry (issue 54 item 4): her identity key, merged from the
/// config's members CSV under the secrets key, is in no topic, no output of the programs, no export, no cache file
/// and nowhere in PostgreSQL's data directory, in hex or as bytes; once she is forgotten and the registry purged, not
/// even the sealed key is left there.
@Suite("Eddystone-EID keys on a chain's PostgreSQL registry", .serialized)
struct ChainEIDSecrecyTests {
    /// Bea's fob: K = 10, counting from the Unix epoch. Bytes no other value of the test holds.
    static let identityKey: [UInt8] = [0xC3, 0x5A, 0x9E, 0x71, 0x2B, 0xD4, 0x86, 0xF1, 0x3C, 0x67, 0xA8, 0x15, 0xE9, 0x42, 0xB7, 0x5D]
    static let keyHex = identityKey.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()

    /// A batch of node 1/10/a hearing Bea's fob advertise its id of now.
    static func batch(seq: Int) throws -> String {
        let now = Mesh.nowMilliseconds
        let fob = try #require(EddystoneEID(identityKey: identityKey, rotationExponent: 10))
        return Mesh.batch(
            store: 1, department: 10, boot: "eid", seq: seq, beacon: fob.beaconKey(counter: UInt32(now / 1000)).description, rssi: -58,
            at: now)
    }

    @Test(
        "her fob greets her on PostgreSQL; her key is in no topic, output, export, cache file or data directory; forgotten and purged, not even the sealed key is left"
    )
    func keyIsNowhere() async throws {
        let base = try await ChainInfrastructure.start(
            members: "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt,eid\nbea,Bea Lund,Chai,,,0,,,\(Self.keyHex):10:0\n",
            filters: ["beaconmesh/v1/#"])
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: base.directory + "/secrets.key"))
        let coordinator = try await base.startCoordinator(
            name: "store-1",
            config: base.storeOneConfig(top: ["secretsKeyFile: secrets.key"], store: ["departments:", "  - {id: 10, name: Clothing}"]))
        let heard = Task {
            try? await TopicPublisher.paced(
                port: base.broker.port, topic: "beaconmesh/v1/stores/1/departments/10/nodes/a/sightings", count: 12,
                every: .milliseconds(250)
            ) { index in try Self.batch(seq: index + 1) }
        }
        #expect(
            await eventually(timeout: .seconds(10)) {
                base.events("arrived").contains { ($0["member"] as? [String: Any])?["id"] as? String == "bea" }
            },
            "\(base.watch.lines)\n\(coordinator.transcript)")
        await heard.value
        #expect(await eventually(timeout: .seconds(15)) { !base.events("left").isEmpty }, "\(base.watch.lines)")
        #expect(try await base.writesSettled(of: "store-1"), "the visit is in the registry")

        let export = try await ChainInfrastructure.members(["export", base.directory + "/export.csv"], base.url)
        let exported = try String(contentsOfFile: base.directory + "/export.csv", encoding: .utf8)
        #expect(exported.contains("Bea Lund") && !exported.lowercased().contains(Self.keyHex), "\(exported)")
        #expect(exported.split(separator: "\n").first.map { !$0.split(separator: ",").contains("eid") } == true, "\(exported)")
        let database = String(base.url.split(separator: "/").last ?? "")
        let sealedHex = try base.server.psql("SELECT encode(sealed_key, 'hex') FROM member_fob WHERE member = 'bea'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(sealedHex.count > 32 * 2, "her key is sealed in the registry: \(sealedHex)")
        let sealed = try #require(SecretsKey.hexBytes(Array(sealedHex.utf8)))

        let data = base.server.directory + "/data"
        #expect(try Self.files(in: data, holding: Self.identityKey).isEmpty, "her key as bytes in the data directory")
        #expect(try Self.files(in: data, holding: Array(Self.keyHex.utf8)).isEmpty, "her key in hex in the data directory")
        #expect(try Self.files(in: data, holding: Array(Self.keyHex.uppercased().utf8)).isEmpty)
        #expect(try !Self.files(in: data, holding: sealed).isEmpty, "the sealed key is written: the search finds what is there")
        // The folder of the config: the cache file, the export (the members CSV the shop wrote holds her key: left out).
        for file in try FileManager.default.contentsOfDirectory(atPath: base.directory) where file != "members.csv" {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: base.directory + "/" + file)))
            #expect(!Self.contains(bytes, Self.identityKey) && !Self.contains(bytes, Array(Self.keyHex.utf8)), "\(file)")
        }
        #expect(FileManager.default.fileExists(atPath: base.directory + "/store-1.cache"), "the cache file is among those searched")

        try await ChainInfrastructure.members(["forget", "bea"], base.url)
        #expect(await eventually(timeout: .seconds(10)) { base.watch.lines.contains { $0.contains("member-forgotten") } })
        let outboxEmpty = await eventually(timeout: .seconds(10), interval: .milliseconds(250)) {
            (try? base.server.psql("SELECT count(*) FROM registry_event", database: database))?.hasPrefix("0") == true
        }
        #expect(outboxEmpty, "the coordinator deletes the published event")
        try await ChainInfrastructure.members(["purge"], base.url)
        #expect(try base.server.psql("SELECT count(*) FROM member_fob", database: database).hasPrefix("0"))
        #expect(try Self.files(in: data, holding: sealed).isEmpty, "the sealed key is gone with her")
        #expect(!(try base.server.dumpData(database: database)).contains(sealedHex))

        let outputs = base.watch.lines + [coordinator.transcript, export.transcript]
        for output in outputs { #expect(!output.lowercased().contains(Self.keyHex), "the key in: \(output.prefix(300))") }
        await base.stop([coordinator])
    }

    /// The files under `folder` (recursively) whose bytes hold `needle`.
    private static func files(in folder: String, holding needle: [UInt8]) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder) else { throw TestSupportError("cannot list \(folder)") }
        var hits: [String] = []
        while let name = walker.nextObject() as? String {
            let path = folder + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                let data = FileManager.default.contents(atPath: path)
            else { continue }
            if data.range(of: Data(needle)) != nil { hits.append(name) }
        }
        return hits
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        Data(bytes).range(of: Data(needle)) != nil
    }
}
