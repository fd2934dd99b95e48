import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import GRDB
import PostgresNIO
import Testing

@testable import BeaconMeshRegistry

private let header = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt,tier"
private let uuid = "0cf052c2-97ca-407c-84f8-b62aac4e9020"

@Suite("Member registry, on SQLite and on PostgreSQL")
struct MemberRegistryTests {
    @Test("import merges by id: the larger visits and the later lastVisitAt win; new ids are added", arguments: Backend.allCases)
    func mergeRules(backend: Backend) throws {
        let registry = try backend.makeRegistry()
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
        #expect(summary == ImportSummary(added: 1, updated: 1, unchanged: 1))
        let ana = try #require(try registry.member(id: "ana"))
        #expect(ana.profile.visits == 10)
        #expect(ana.profile.lastVisitAt == Timestamp(milliseconds: 3000))
        #expect(ana.profile.name == "Ana Souza" && ana.profile.favoriteDrink == "Cortado")
        #expect(ana.beacons.count == 2)
        #expect(ana.profile.customFields == ["tier": "gold"])
        #expect(try registry.beaconOwners().count == 4)
    }

    @Test(
        "every member read at once is each member as read alone: fields, beacons in order, counts, times, no one mixed up",
        arguments: Backend.allCases)
    func allMembersMatchOneByOne(backend: Backend) throws {
        let registry = try backend.makeRegistry()
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
        arguments: Backend.allCases,
        [
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
    func malformedRows(backend: Backend, example: (csv: String, message: String)) throws {
        let (csv, message) = example
        let folder = try temporaryFolder()
        try csv.write(toFile: folder + "/c.csv", atomically: true, encoding: .utf8)
        let registry = try backend.makeRegistry()
        #expect {
            try registry.merge(try MembersCSV.read(path: folder + "/c.csv").records)
        } throws: { error in
            "\(error)".hasPrefix(folder + "/" + message)
        }
        #expect(try registry.allMembers().isEmpty)
    }

    @Test("export, then import into another registry, reproduces it", arguments: Backend.allCases)
    func exportImportRoundTrip(backend: Backend) throws {
        let folder = try temporaryFolder()
        let first = try backend.makeRegistry()
        try first.merge(
            try MembersCSV.parse(
                #"""
                \#(header),note
                ana,"Souza, Ana",Flat white,ibeacon:\#(uuid):1:1;eddystone:8b0ca750e7a74e14bd99:0000000004d2,"data:image/png;base64,AAAA",11,1763683200000,1735689600000,gold,"says ""hi"""
                li,李雷,Jasmine tea,altbeacon:\#(uuid):1:5,,24,1763510400000,,gold,
                """#, file: "in.csv"))
        var counted = RegistryChanges()
        counted.countVisit(of: "li", at: Timestamp(milliseconds: 1_800_000_000_000))
        try first.apply(counted)
        try MembersCSV.write(try first.allMembers(), to: folder + "/out.csv")
        let second = try backend.makeRegistry()
        try second.merge(try MembersCSV.read(path: folder + "/out.csv").records)
        #expect(try second.allMembers() == (try first.allMembers()))
        #expect(try second.member(id: "li")?.profile.visits == 25)
        #expect(try second.member(id: "ana")?.profile.customFields == ["tier": "gold", "note": "says \"hi\""])
    }

    @Test(
        "members read by id, over a thousand at once, come with their own fields and beacons; unknown ids are left out",
        arguments: Backend.allCases)
    func membersByID(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        let rows = (0..<1_200).map { index in
            "m\(index),Member \(index),,ibeacon:\(uuid):7:\(2 * index + 1);ibeacon:\(uuid):7:\(2 * index + 2),,\(index),,,tier \(index % 3)"
        }
        try registry.merge(try MembersCSV.parse(([header] + rows).joined(separator: "\n"), file: "m.csv"))
        let wanted = Set((0..<1_100).map { "m\($0 * 13 % 1_200)" }).union(["nobody", "m1200"])
        let all = try registry.allMembers()
        #expect(all.count == 1_200)
        #expect(try registry.members(ids: wanted) == all.filter { wanted.contains($0.id) })
        let m7 = try registry.member(id: "m7")
        #expect(m7?.profile.customFields == ["tier": "tier 1"] && m7?.profile.visits == 7)
        #expect(m7?.beacons.map(\.description).sorted() == ["ibeacon:\(uuid):7:15", "ibeacon:\(uuid):7:16"])
        #expect(try registry.members(ids: []).isEmpty)
    }

    @Test("forget leaves no trace of the member in the database", arguments: Backend.allCases)
    func forgetLeavesNoTrace(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let registry = try database.open()
        try registry.merge(
            try MembersCSV.parse(
                """
                \(header)
                zq-unique-77,Zebulon Quixote,Matcha latte,ibeacon:\(uuid):1:77,,3,1000,1,platinum
                ana,Ana,,ibeacon:\(uuid):1:1,,1,,,
                """, file: "in.csv"))
        var visited = RegistryChanges()
        visited.countVisit(of: "zq-unique-77", at: Timestamp(milliseconds: 2000))
        visited.save(
            PresenceEngine.Visit(
                member: "zq-unique-77", store: 1, arrivedAt: Timestamp(milliseconds: 2000), department: 10,
                inDepartmentSince: Timestamp(milliseconds: 2000), lastSeen: Timestamp(milliseconds: 2000), leftAt: nil))
        try registry.apply(visited)
        #expect(try registry.loadVisits().count == 1)
        try registry.recordPromoFire(member: "zq-unique-77", promo: "shirts", store: 1, at: Timestamp(milliseconds: 2500))
        #expect(try registry.forget(id: "zq-unique-77"))
        #expect(try registry.member(id: "zq-unique-77") == nil)
        #expect(try registry.loadVisits().isEmpty)
        #expect(try registry.promoFires()["zq-unique-77"] == nil)
        // The outbox's `member-forgotten` row names the id until a coordinator published it.
        var published = RegistryChanges()
        for event in try registry.claimRegistryEvents(for: "test") { published.registryEventPublished(event.seq) }
        try registry.apply(published)
        for (place, bytes) in try database.everythingStored() {
            for secret in ["zq-unique-77", "Zebulon", "Quixote", "Matcha", "platinum", "\(uuid):1:77"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is still in \(place)")
            }
        }
        #expect(try registry.member(id: "ana") != nil)
    }

    @Test("a SQLite database written by an older version is upgraded when opened")
    func migration() throws {
        let folder = try temporaryFolder()
        let path = folder + "/old.sqlite"
        let old = try DatabaseQueue(path: path)
        let migrator = SQLiteRegistry.migrator
        try migrator.migrate(old, upTo: "v1: members, beacons, visits")
        try old.write { db in try db.execute(sql: "INSERT INTO member (id, name, visits) VALUES ('ana', 'Ana', 5)") }
        try old.close()
        let registry = try SQLiteRegistry(path: path)
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
            _ = try SQLiteRegistry(path: folder + "/bad.sqlite")
        } throws: { error in
            "\(error)".contains("is not a BeaconMesh database or is damaged")
        }
    }
}

@Suite("A SQLite registry locked by another program")
struct LockedSQLiteRegistryTests {
    @Test("looking for registry events while another program holds the write lock reads, and takes no write lock")
    func claimingNothingTakesNoWriteLock() throws {
        let folder = try temporaryFolder()
        let path = folder + "/mesh.sqlite"
        let registry = try SQLiteRegistry(path: path)
        try registry.merge(try MembersCSV.parse("\(header)\nana,Ana,,ibeacon:\(uuid):1:1,,1,,,", file: "m.csv"))
        let claimed = try registry.claimRegistryEvents(for: "lisboa")
        #expect(claimed.map(\.member) == ["ana"])
        // Another program (the `members` command, a backup) holds the write lock, as BEGIN EXCLUSIVE does.
        var configuration = Configuration()
        configuration.busyMode = .immediateError
        configuration.allowsUnsafeTransactions = true
        let other = try DatabaseQueue(path: path, configuration: configuration)
        try other.inDatabase { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
        defer { try? other.inDatabase { db in try db.execute(sql: "ROLLBACK") } }
        // The coordinator's look every second: nothing new to claim, so a read, not a wait on the lock that fails.
        #expect(try registry.claimRegistryEvents(for: "lisboa") == claimed)
    }
}

@Suite("A registry shared by several coordinators")
struct SharedRegistryTests {
    private static let members = """
        \(header)
        ana,Ana,Flat white,ibeacon:\(uuid):1:1,,10,2000,1,gold
        ben,Ben,,ibeacon:\(uuid):1:2,,3,5000,1,
        """

    @Test("visits and check-ins counted by two coordinators at once both count", arguments: Backend.allCases)
    func countsAreIncrements(backend: Backend) async throws {
        let database = try backend.makeDatabase()
        let lisboa = try database.open()
        let porto = try database.open()
        try lisboa.merge(try MembersCSV.parse(Self.members, file: "m.csv"))
        await withTaskGroup(of: Void.self) { group in
            for registry in [lisboa, porto] {
                group.addTask {
                    for index in 0..<25 {
                        var changes = RegistryChanges()
                        changes.countVisit(of: "ana", at: Timestamp(milliseconds: 10_000 + Int64(index)))
                        changes.countCheckin(of: "ana")
                        try? registry.apply(changes)
                    }
                }
            }
        }
        let ana = try #require(try lisboa.member(id: "ana"))
        #expect(ana.profile.visits == 60)
        #expect(ana.profile.checkins == 50)
        #expect(ana.profile.lastVisitAt == Timestamp(milliseconds: 10_024))
    }

    @Test("a batch tried again after its answer was lost is applied once", arguments: Backend.allCases)
    func batchAppliedOnce(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        try registry.merge(try MembersCSV.parse(Self.members, file: "m.csv"))
        var changes = RegistryChanges()
        changes.countVisit(of: "ben", visits: 2, at: Timestamp(milliseconds: 9000))
        try registry.apply(changes, batch: "writer-1", stores: nil)
        try registry.apply(changes, batch: "writer-1", stores: nil)
        try registry.apply(changes, batch: "writer-2", stores: nil)
        #expect(try registry.member(id: "ben")?.profile.visits == 7)
    }

    @Test("writes kept for a member forgotten meanwhile never bring them back", arguments: Backend.allCases)
    func forgottenStaysForgotten(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let store = try database.open()
        try store.merge(try MembersCSV.parse(Self.members, file: "m.csv"))
        try database.open().forget(id: "ana")
        var kept = RegistryChanges()
        let at = Timestamp(milliseconds: 20_000)
        kept.countVisit(of: "ana", at: at)
        kept.countCheckin(of: "ana")
        kept.save(
            PresenceEngine.Visit(
                member: "ana", store: 1, arrivedAt: at, department: 10, inDepartmentSince: at, lastSeen: at, leftAt: nil))
        kept.promoFired("shirts", member: "ana", store: 1, at: at)
        try store.apply(kept, batch: "after-outage", stores: [1])
        #expect(try store.member(id: "ana") == nil)
        #expect(try store.loadVisits().isEmpty)
        #expect(try store.promoFires()["ana"] == nil)
        #expect(try store.allMembers().map(\.id) == ["ben"])
    }

    @Test("each registry event is claimed by one coordinator, and again by it until published", arguments: Backend.allCases)
    func outboxClaimedOnce(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let first = try database.open()
        let second = try database.open()
        try first.merge(try MembersCSV.parse(Self.members, file: "m.csv"))
        let claimed = try first.claimRegistryEvents(for: "lisboa")
        #expect(claimed.map(\.member) == ["ana", "ben"] && claimed.allSatisfy { $0.kind == .added })
        #expect(try second.claimRegistryEvents(for: "porto").isEmpty)
        try second.remove(id: "ben")
        #expect(try second.claimRegistryEvents(for: "porto").map { "\($0.kind.rawValue) \($0.member)" } == ["member-removed ben"])
        #expect(try first.claimRegistryEvents(for: "lisboa") == claimed)
        var published = RegistryChanges()
        for event in claimed { published.registryEventPublished(event.seq) }
        try first.apply(published)
        #expect(try first.claimRegistryEvents(for: "lisboa").isEmpty)
    }

    @Test("saved visits are read back per store", arguments: Backend.allCases)
    func visitsPerStore(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        try registry.merge(try MembersCSV.parse(Self.members, file: "m.csv"))
        var changes = RegistryChanges()
        for (member, store) in [("ana", UInt16(1)), ("ben", UInt16(2))] {
            let at = Timestamp(milliseconds: 1000)
            changes.save(
                PresenceEngine.Visit(
                    member: member, store: store, arrivedAt: at, department: 10, inDepartmentSince: at, lastSeen: at,
                    leftAt: nil))
        }
        try registry.apply(changes)
        #expect(try registry.loadVisits(stores: [2]).map(\.member) == ["ben"])
        #expect(Set(try registry.loadVisits().map(\.member)) == ["ana", "ben"])
        var ended = RegistryChanges()
        ended.endVisit(of: "ben")
        try registry.apply(ended, batch: nil, stores: [2])
        #expect(try registry.loadVisits().map(\.member) == ["ana"])
    }

    @Test("another connection's member changes reach the change feed", arguments: Backend.allCases)
    func changeFeed(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let coordinator = try database.open()
        let feed = try coordinator.changeFeed()
        defer { feed.close() }
        if backend == .postgres {
            // Listening starts with a full read: announcements before it may have been missed.
            #expect(try feed.next(timeout: .seconds(5)) == .everything)
        }
        let command = try database.open()
        try command.merge(try MembersCSV.parse(Self.members, file: "m.csv"))
        var change = try feed.next(timeout: .seconds(5))
        #expect(change == .members(["ana", "ben"]))
        // The coordinator's own counts are not announced back to it.
        var counted = RegistryChanges()
        counted.countVisit(of: "ana", at: Timestamp(milliseconds: 1))
        try coordinator.apply(counted)
        #expect(try feed.next(timeout: .milliseconds(backend == .postgres ? 500 : 10)) == .nothing)
        try command.forget(id: "ben")
        change = try feed.next(timeout: .seconds(5))
        // Neither backend's log keeps a forgotten id, even for the feed: it says "read everything", which shows Ben gone.
        #expect(change == .everything)
    }

    /// Another store's visit history, written into the same registry, changes no member: the feed says nothing, so the
    /// coordinator reads nothing again (SQLite's feed said `.everything` at every such commit: a whole read of the
    /// members each time, which doubled the coordinator's arrival p99 while other stores wrote history).
    @Test("history another connection writes is no member change; a moved beacon names both owners", arguments: Backend.allCases)
    func changeFeedNamesOnlyMembers(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let coordinator = try database.open()
        let command = try database.open()
        try command.merge(try MembersCSV.parse(Self.members, file: "m.csv"))
        let feed = try coordinator.changeFeed()
        defer { feed.close() }
        if backend == .postgres { #expect(try feed.next(timeout: .seconds(5)) == .everything) }
        var history = RegistryChanges()
        history.record(
            VisitRecord(
                member: "ana", store: 2, arrivedAt: Timestamp(milliseconds: 1000), leftAt: Timestamp(milliseconds: 61_000),
                number: 1, stops: [], offers: [], checkins: []))
        try command.apply(history, batch: "other-store-1", stores: [2])
        #expect(try feed.next(timeout: .milliseconds(backend == .postgres ? 500 : 10)) == .nothing)
        // ben's beacon is given to ana: both read again, so ben no longer owns it. (PostgreSQL's trigger announces the
        // new owner only: not checked here.)
        guard backend == .sqlite else { return }
        guard var ana = try command.member(id: "ana"), let bens = try command.member(id: "ben")?.beacons.first else {
            throw TestSupportError("members missing")
        }
        ana.beacons.append(bens)
        try command.upsert(ana)
        #expect(try feed.next(timeout: .seconds(5)) == .members(["ana", "ben"]))
    }

    @Test("thousands of members changed at once are read whole", arguments: [Backend.sqlite])
    func changeFeedManyMembers(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let coordinator = try database.open()
        let feed = try coordinator.changeFeed()
        defer { feed.close() }
        let many = (0..<2500).map { MemberRecord(profile: MemberProfile(id: "m\($0)", name: "Member \($0)"), beacons: [], createdAt: nil) }
        try database.open().merge(many)
        #expect(try feed.next(timeout: .seconds(5)) == .everything)
        #expect(try feed.next(timeout: .milliseconds(10)) == .nothing)
    }
}

@Suite("Registry locations")
struct RegistryLocationTests {
    @Test("a file is SQLite, a postgres URL names user, host, port, database and TLS")
    func parse() throws {
        #expect(try RegistryLocation("beaconmesh.sqlite") == .sqlite(path: "beaconmesh.sqlite"))
        guard case .postgres(let settings) = try RegistryLocation("postgres://coordinator@hq.example.com:6432/chain?sslmode=require")
        else { throw TestSupportError("not PostgreSQL") }
        #expect(settings.user == "coordinator" && settings.host == "hq.example.com" && settings.port == 6432)
        #expect(settings.database == "chain" && settings.tls == .require)
        #expect(settings.displayURL == "postgres://coordinator@hq.example.com:6432/chain")
        guard case .postgres(let plain) = try RegistryLocation("postgresql://c@db/chain") else { throw TestSupportError("not PostgreSQL") }
        #expect(plain.port == 5432 && plain.tls == .disable)
    }

    @Test(
        "a bad URL is refused in one line",
        arguments: [
            ("postgres://coordinator:secret@hq:5432/chain", "must not hold a password"),
            ("postgres://hq:5432/chain", "names no user"),
            ("postgres://c@hq:5432/", "names no database"),
            ("postgres://c@hq/chain?sslmode=sometimes", "sslmode 'sometimes'"),
            ("postgres://c@hq/chain?timeout=3", "unknown parameter 'timeout'"),
        ])
    func refused(url: String, message: String) {
        let refusal = #expect(throws: RegistryFailure.self) { _ = try RegistryLocation(url) }
        #expect(refusal?.kind == .invalidLocation)
        #expect(refusal?.description.contains(message) == true)
        #expect(refusal?.description.contains("\n") == false)
    }

    @Test("an unreachable server is named with its host and the cause")
    func unreachable() throws {
        let port = try FreePort.next()
        #expect {
            _ = try RegistryLocation("postgres://coordinator@127.0.0.1:\(port)/chain").open(environment: [:])
        } throws: { error in
            "\(error)".contains("postgres://coordinator@127.0.0.1:\(port)/chain") && "\(error)".contains("cannot connect")
        }
    }

    @Test("a wrong password is refused, naming where the password comes from; the right one from a file works")
    func wrongPassword() throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        try server.psql("CREATE ROLE store LOGIN PASSWORD 'right'")
        try server.psql("CREATE DATABASE chain OWNER store")
        let hba = server.directory + "/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("host all store 127.0.0.1/32 scram-sha-256\n" + rules).write(toFile: hba, atomically: true, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()")
        let location = try RegistryLocation("postgres://store@127.0.0.1:\(server.port)/chain")
        #expect {
            _ = try location.open(environment: [RegistryLocation.passwordVariable: "wrong"])
        } throws: { error in
            "\(error)".contains("refused the login") && "\(error)".contains("BEACONMESH_DB_PASSWORD")
        }
        let file = try temporaryFolder() + "/db.pass"
        try "right\n".write(toFile: file, atomically: true, encoding: .utf8)
        let registry = try location.open(passwordFile: file, environment: [RegistryLocation.passwordVariable: "wrong"])
        #expect(try registry.allMembers().isEmpty)
    }
}

@Suite("A chain registry's coordinator role")
struct RegistryRoleTests {
    @Test("the provisioned role reads and writes the registry's rows, but creates nothing and reaches no other schema")
    func leastPrivilege() throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        try server.psql("CREATE ROLE owner LOGIN CREATEROLE PASSWORD 'ownerpw'")
        try server.psql("CREATE DATABASE chain OWNER owner")
        try server.psql("CREATE SCHEMA office AUTHORIZATION owner; CREATE TABLE office.salaries (x int)", database: "chain")
        let hba = server.directory + "/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("host all owner,store 127.0.0.1/32 scram-sha-256\n" + rules).write(toFile: hba, atomically: true, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()")
        let owner = try #require(
            try RegistryLocation("postgres://owner@127.0.0.1:\(server.port)/chain").open(
                environment: [RegistryLocation.passwordVariable: "ownerpw"]) as? PostgresRegistry)
        try owner.provisionRole("store", password: "Secret42")
        let store = try RegistryLocation("postgres://store@127.0.0.1:\(server.port)/chain").open(
            environment: [RegistryLocation.passwordVariable: "Secret42"])
        try store.merge(try MembersCSV.parse("\(header)\nana,Ana,,ibeacon:\(uuid):1:1,,1,,,\n", file: "m.csv"))
        var counted = RegistryChanges()
        counted.countVisit(of: "ana", at: Timestamp(milliseconds: 5))
        try store.apply(counted, batch: "b1", stores: [1])
        #expect(try store.member(id: "ana")?.profile.visits == 2)
        #expect(try store.forget(id: "ana"))
        let session = try #require(store as? PostgresRegistry).session
        for forbidden in ["CREATE TABLE public.extra (x int)", "DROP TABLE member", "SELECT * FROM office.salaries"] {
            #expect(throws: (any Error).self, "\(forbidden)") {
                try session.run { statements in try statements.execute(PostgresQuery(unsafeSQL: forbidden)) }
            }
        }
        let refusal = #expect(throws: RegistryFailure.self) { try owner.provisionRole("store; DROP", password: "x") }
        #expect(refusal?.kind == .invalidRequest)
    }
}

@Suite("PostgreSQL connections")
struct PostgresConnectionTests {
    @Test("sslmode=require talks TLS, verify-full checks the server against the CA, and a TLS-only server refuses clear text")
    func tls() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let certificates = try await TestCertificates.generate(in: try temporaryFolder())
        let data = server.directory + "/data"
        for (file, name) in [(certificates.serverCertificate, "server.crt"), (certificates.serverKey, "server.key")] {
            try FileManager.default.copyItem(atPath: file, toPath: data + "/" + name)
            if geteuid() == 0 { chown(data + "/" + name, getpwnam("postgres").pointee.pw_uid, getpwnam("postgres").pointee.pw_gid) }
            chmod(data + "/" + name, 0o600)
        }
        try server.psql("CREATE ROLE store LOGIN PASSWORD 'pw'")
        try server.psql("CREATE DATABASE chain OWNER store")
        try server.psql("ALTER SYSTEM SET ssl = on")
        let hba = data + "/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("hostssl all store 127.0.0.1/32 scram-sha-256\nhostnossl all store 127.0.0.1/32 reject\n" + rules).write(
            toFile: hba, atomically: true, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()")
        let base = "postgres://store@127.0.0.1:\(server.port)/chain"
        let password = [RegistryLocation.passwordVariable: "pw"]
        // The server has read the new rules once a connection without TLS is rejected.
        let reloaded = await eventually(timeout: .seconds(10), interval: .milliseconds(50)) {
            (try? RegistryLocation(base).open(environment: password)) == nil
        }
        #expect(reloaded, "the server never applied hostnossl reject")
        #expect(try RegistryLocation(base + "?sslmode=require").open(environment: password).allMembers().isEmpty)
        let verified = try RegistryLocation(base + "?sslmode=verify-full&sslrootcert=\(certificates.caCertificate)")
        #expect(try verified.open(environment: password).allMembers().isEmpty)
        #expect(throws: RegistryFailure.self) { _ = try RegistryLocation(base).open(environment: password) }
        // Verified against the system's authorities, the test CA's certificate is refused.
        #expect(throws: RegistryFailure.self) {
            _ = try RegistryLocation(base + "?sslmode=verify-full").open(environment: password)
        }
    }

    @Test("coordinators starting together on a new database migrate it once")
    func concurrentMigrations() async throws {
        let server = try PostgresServer.shared()
        let url = try server.createDatabase()
        let opened = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask { (try? RegistryLocation(url).open(environment: [:])) != nil }
            }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(opened == 4)
        let database = String(url.split(separator: "/").last ?? "")
        #expect(
            try server.psql("SELECT count(*) FROM schema_migration", database: database).trimmingCharacters(in: .whitespacesAndNewlines)
                == "\(PostgresSchema.migrations.count)")
    }
}
