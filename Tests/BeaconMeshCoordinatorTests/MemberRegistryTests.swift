import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import GRDB
import Testing

@testable import BeaconMeshCoordinator

private func temporaryFolder() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-registry-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

private let header = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt,tier"
private let uuid = "0cf052c2-97ca-407c-84f8-b62aac4e9020"

@Suite("Member registry")
struct MemberRegistryTests {
    @Test("import merges by id: the larger visits and the later lastVisitAt win; new ids are added")
    func mergeRules() throws {
        let folder = try temporaryFolder()
        let registry = try MemberRegistry(path: folder + "/db.sqlite")
        try registry.merge(
            try MembersCSV.parse(
                """
                \(header)
                ana,Ana,Flat white,ibeacon:\(uuid):1:1,,10,2000,1,gold
                ben,Ben,,ibeacon:\(uuid):1:2,,3,5000,1,
                """, file: "a.csv"))
        let summary = try registry.merge(
            try MembersCSV.parse(
                """
                \(header)
                ana,Ana Souza,Cortado,ibeacon:\(uuid):1:1;ibeacon:\(uuid):9:1,,4,3000,1,gold
                ben,Ben,,ibeacon:\(uuid):1:2,,3,5000,1,
                zoe,Zoë,,ibeacon:\(uuid):1:4,,0,,,
                """, file: "b.csv"))
        #expect(summary == MemberRegistry.ImportSummary(added: 1, updated: 1, unchanged: 1))
        let ana = try #require(try registry.member(id: "ana"))
        #expect(ana.profile.visits == 10)
        #expect(ana.profile.lastVisitAt == Timestamp(milliseconds: 3000))
        #expect(ana.profile.name == "Ana Souza" && ana.profile.favoriteDrink == "Cortado")
        #expect(ana.beacons.count == 2)
        #expect(ana.profile.customFields == ["tier": "gold"])
        #expect(try registry.beaconOwners().count == 4)
    }

    @Test("every member read at once is each member as read alone: fields, beacons in order, counts, times, no one mixed up")
    func allMembersMatchOneByOne() throws {
        let folder = try temporaryFolder()
        let registry = try MemberRegistry(path: folder + "/db.sqlite")
        var rows = [header]
        for index in 1...300 {
            // Beacons listed out of order, some members without beacons, fields or times.
            let eddystone = "eddystone:00112233445566778899:" + String(format: "%012x", index)
            let beacons = index % 7 == 0 ? "" : "ibeacon:\(uuid):\(index):9;ibeacon:\(uuid):\(index):2;\(eddystone)"
            let drink = index % 3 == 0 ? "" : "Tea"
            let lastVisit = index % 5 == 0 ? "" : "\(index * 1000)"
            let tier = index % 4 == 0 ? "" : "tier\(index % 3)"
            rows.append("m\(index),Member \(index),\(drink),\(beacons),,\(index % 11),\(lastVisit),\(index),\(tier)")
        }
        try registry.merge(try MembersCSV.parse(rows.joined(separator: "\n"), file: "many.csv"))
        try registry.remove(id: "m150")
        let all = try registry.allMembers()
        #expect(all.map(\.id) == (1...300).filter { $0 != 150 }.map { "m\($0)" }.sorted())
        for record in all {
            #expect(try registry.member(id: record.id) == record)
        }
        let m14 = try #require(all.first { $0.id == "m14" })
        #expect(m14.beacons.isEmpty && m14.profile.customFields == ["tier": "tier2"])
        let m8 = try #require(all.first { $0.id == "m8" })
        #expect(m8.beacons.map(\.description) == m8.beacons.map(\.description).sorted() && m8.beacons.count == 3)
        #expect(m8.profile.customFields.isEmpty && m8.profile.lastVisitAt == Timestamp(milliseconds: 8000))
    }

    @Test(
        "a malformed row names its line and nothing of the file is written",
        arguments: [
            ("\(header)\nana,Ana,,ibeacon:\(uuid):1:1,,1,,,\nben,Ben,,ibeacon:nope,,1,,,\n", "c.csv:3: 'ibeacon:nope' is not a beacon key"),
            ("\(header)\nana,Ana,,,,many,,,\n", "c.csv:2: visits must be a whole number"),
            ("\(header)\nana,Ana,,,,1,yesterday,,\n", "c.csv:2: lastVisitAt must be epoch milliseconds"),
            ("\(header)\nana,Ana,,,,1,,,\nana,Anna,,,,1,,,\n", "c.csv:3: member id 'ana' already appears on line 2"),
            ("\(header)\n,NoId,,,,1,,,\n", "c.csv:2: the member id is empty"),
            ("id,name\nana,Ana\n", "c.csv:1: the header lacks the column 'favoriteDrink'"),
            ("\(header)\nana,Ana,,,,1,,\n", "c.csv:2: the row has 8 fields, the header 9"),
            (
                "\(header)\nana,Ana,,ibeacon:\(uuid):1:1,,1,,,\nben,Ben,,ibeacon:\(uuid):1:1,,1,,,\n",
                "c.csv:3: beacon ibeacon:\(uuid):1:1 already belongs to member 'ana'"
            ),
        ])
    func malformedRows(csv: String, message: String) throws {
        let folder = try temporaryFolder()
        try csv.write(toFile: folder + "/c.csv", atomically: true, encoding: .utf8)
        let registry = try MemberRegistry(path: folder + "/db.sqlite")
        #expect {
            try registry.merge(try MembersCSV.read(path: folder + "/c.csv"))
        } throws: { error in
            "\(error)".hasPrefix(folder + "/" + message)
        }
        #expect(try registry.allMembers().isEmpty)
    }

    @Test("export, then import into another registry, reproduces it")
    func exportImportRoundTrip() throws {
        let folder = try temporaryFolder()
        let first = try MemberRegistry(path: folder + "/one.sqlite")
        try first.merge(
            try MembersCSV.parse(
                #"""
                \#(header),note
                ana,"Souza, Ana",Flat white,ibeacon:\#(uuid):1:1;eddystone:8b0ca750e7a74e14bd99:0000000004d2,"data:image/png;base64,AAAA",11,1763683200000,1735689600000,gold,"says ""hi"""
                li,李雷,Jasmine tea,altbeacon:\#(uuid):1:5,,24,1763510400000,,gold,
                """#, file: "in.csv"))
        var counted = RegistryChanges()
        counted.countVisit(of: "li", visits: 25, at: Timestamp(milliseconds: 1_800_000_000_000))
        try first.apply(counted)
        try MembersCSV.write(try first.allMembers(), to: folder + "/out.csv")
        let second = try MemberRegistry(path: folder + "/two.sqlite")
        try second.merge(try MembersCSV.read(path: folder + "/out.csv"))
        #expect(try second.allMembers() == (try first.allMembers()))
        #expect(try second.member(id: "li")?.profile.visits == 25)
        #expect(try second.member(id: "ana")?.profile.customFields == ["tier": "gold", "note": "says \"hi\""])
    }

    @Test("forget leaves no trace of the member in the database file")
    func forgetLeavesNoTrace() throws {
        let folder = try temporaryFolder()
        let path = folder + "/db.sqlite"
        let registry = try MemberRegistry(path: path)
        try registry.merge(
            try MembersCSV.parse(
                """
                \(header)
                zq,Zebulon Quixote,Matcha latte,ibeacon:\(uuid):1:77,,3,1000,1,platinum
                ana,Ana,,ibeacon:\(uuid):1:1,,1,,,
                """, file: "in.csv"))
        var visited = RegistryChanges()
        visited.countVisit(of: "zq", visits: 4, at: Timestamp(milliseconds: 2000))
        visited.save(
            PresenceEngine.Visit(
                member: "zq", store: 1, arrivedAt: Timestamp(milliseconds: 2000), department: 10,
                inDepartmentSince: Timestamp(milliseconds: 2000), lastSeen: Timestamp(milliseconds: 2000), leftAt: nil))
        try registry.apply(visited)
        #expect(try registry.loadVisits().count == 1)
        try registry.recordPromoFire(member: "zq", promo: "shirts", store: 1, at: Timestamp(milliseconds: 2500))
        #expect(try registry.forget(id: "zq"))
        #expect(try registry.member(id: "zq") == nil)
        #expect(try registry.loadVisits().isEmpty)
        #expect(try registry.promoFires()["zq"] == nil)
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            for secret in ["Zebulon", "Quixote", "Matcha", "platinum", "\(uuid):1:77"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is still in \(file)")
            }
        }
        #expect(try registry.member(id: "ana") != nil)
    }

    @Test("a database written by an older version is upgraded when opened")
    func migration() throws {
        let folder = try temporaryFolder()
        let path = folder + "/old.sqlite"
        let old = try DatabaseQueue(path: path)
        var migrator = MemberRegistry.migrator
        try migrator.migrate(old, upTo: "v1: members, beacons, visits")
        try old.write { db in try db.execute(sql: "INSERT INTO member (id, name, visits) VALUES ('ana', 'Ana', 5)") }
        try old.close()
        let registry = try MemberRegistry(path: path)
        #expect(try registry.member(id: "ana")?.profile.visits == 5)
        try registry.recordPromoFire(member: "ana", promo: "p", store: 1, at: Timestamp(milliseconds: 1))
        #expect(try registry.promoFires()["ana"]?["p"] == Timestamp(milliseconds: 1))
        _ = migrator
    }

    @Test("a file that is not a database gives a clear error")
    func corruptFile() throws {
        let folder = try temporaryFolder()
        try String(repeating: "not a database ", count: 400).write(toFile: folder + "/bad.sqlite", atomically: true, encoding: .utf8)
        #expect {
            _ = try MemberRegistry(path: folder + "/bad.sqlite")
        } throws: { error in
            "\(error)".contains("is not a BeaconMesh database or is damaged")
        }
    }
}

@Suite("Coordinator config promos")
struct PromoConfigTests {
    private func config(_ promo: String) throws(ConfigurationError) -> CoordinatorConfiguration {
        try CoordinatorConfiguration.parse(
            yaml: """
                stores:
                  - id: 1
                    departments:
                      - id: 10
                        promo: {id: p, title: T, message: M, \(promo)}
                """, file: "c.yaml", defaultID: "x")
    }

    @Test("validity and audience keys are read")
    func keys() throws {
        let rule = try #require(
            try config("from: 2026-11-01, until: 2026-11-30, hours: '08:00-11:30', minVisits: 10, members: [ana, ben]")
                .stores[0].departments[0].promo)
        #expect(rule.window.from == PromoWindow.Day(year: 2026, month: 11, day: 1))
        #expect(rule.window.hours?.description == "08:00-11:30")
        #expect(rule.audience == PromoAudience(minVisits: 10, members: ["ana", "ben"]))
    }

    @Test(
        "promo mistakes name the line",
        arguments: [
            ("from: 2026-13-01", "c.yaml:5: stores[0].departments[0].promo.from must be a date YYYY-MM-DD"),
            ("from: 2026-11-30, until: 2026-11-01", "c.yaml:5: stores[0].departments[0].promo.until (2026-11-01) is before"),
            ("hours: 8-12", "c.yaml:5: stores[0].departments[0].promo.hours must be HH:MM-HH:MM"),
            ("minVisits: 0", "c.yaml:5: stores[0].departments[0].promo.minVisits must be a whole number of at least 1"),
            ("proximity: close", "c.yaml:5: stores[0].departments[0].promo.proximity must be immediate, near or far"),
            ("colour: red", "c.yaml:5: unknown key 'colour'"),
        ])
    func errors(promo: String, message: String) {
        #expect {
            _ = try config(promo)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }
}

@Suite("Member photos")
struct PhotoThumbnailTests {
    @Test("a large photo becomes a small JPEG thumbnail data URL")
    func thumbnail() throws {
        let folder = try temporaryFolder()
        let convert = Process()
        convert.executableURL = URL(fileURLWithPath: "/usr/bin/convert")
        convert.arguments = ["-size", "1600x1200", "plasma:", folder + "/big.png"]
        try convert.run()
        convert.waitUntilExit()
        #expect(convert.terminationStatus == 0, "ImageMagick is needed (deploy/install-deps.sh installs it)")
        let url = try PhotoThumbnail.dataURL(fromFile: folder + "/big.png")
        #expect(url.hasPrefix("data:image/jpeg;base64,"))
        let jpeg = try #require(Data(base64Encoded: String(url.dropFirst("data:image/jpeg;base64,".count))))
        #expect(jpeg.count < 16 * 1024, "\(jpeg.count) bytes")
        #expect(jpeg.count > 500)
    }

    @Test("a file that is not a PNG or JPEG is refused with its name")
    func notAnImage() throws {
        let folder = try temporaryFolder()
        try "hello".write(toFile: folder + "/photo.png", atomically: true, encoding: .utf8)
        #expect {
            _ = try PhotoThumbnail.dataURL(fromFile: folder + "/photo.png")
        } throws: { error in
            "\(error)".contains("photo.png' is neither a PNG nor a JPEG image")
        }
    }
}
