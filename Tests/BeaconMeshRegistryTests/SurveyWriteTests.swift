import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import BeaconMeshRegistry

private let header = "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt"

@Suite("Survey samples from a running coordinator, and forgetting them")
struct SurveyWriteTests {
    @Test("queued samples are counted, kept in order across merges, and bounded: the oldest give way")
    func queuedSamples() {
        let first = SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 10, from: 0, seconds: 3)
        let second = SurveySamples.walk(beacon: SurveySamples.beacon(2), department: 20, from: 0, seconds: 2)
        var changes = RegistryChanges()
        #expect(changes.isEmpty)
        changes.addSurveySamples(first)
        changes.countVisit(of: "ana", at: Timestamp(milliseconds: 1))
        #expect(!changes.isEmpty && changes.count == 4)
        var later = RegistryChanges()
        later.addSurveySamples(second)
        changes.merge(later)
        #expect(changes.surveySamples == first + second)
        #expect(changes.count == 6)

        var full = RegistryChanges()
        let many = SurveySamples.walk(beacon: SurveySamples.beacon(3), department: 30, from: 0, seconds: RegistryChanges.surveySampleLimit)
        full.addSurveySamples(many)
        #expect(full.merge(later) == 2, "the two oldest gave way")
        #expect(full.surveySamples.count == RegistryChanges.surveySampleLimit)
        #expect(full.surveySamples.first == many[2] && Array(full.surveySamples.suffix(2)) == second)
    }

    @Test("while the database is away, the samples over the limit that gave way are counted in the writer's status")
    func droppedWhileAway() async throws {
        let writer = try RegistryWriter(
            registry: UnreachableRegistry(), logger: Logger(label: "test"), firstRetry: .seconds(60),
            clock: { Timestamp(milliseconds: 0) })
        for part in 0..<4 {
            var changes = RegistryChanges()
            changes.addSurveySamples(
                SurveySamples.walk(beacon: SurveySamples.beacon(part + 1), department: 10, from: 0, seconds: 3_000))
            writer.enqueue(changes)
        }
        // 12,000 queued: the batch being tried (retried only after a minute) holds at most the first 3,000; what
        // waits behind it is bounded, and what gave way is counted.
        let status = writer.status
        #expect(status.queued <= 3_000 + RegistryChanges.surveySampleLimit)
        #expect(status.surveySamplesDropped == 12_000 - status.queued, "\(status)")
        #expect(status.surveySamplesDropped > 0)
        await writer.close(timeout: .milliseconds(100))
    }

    @Test("the registry writer adds queued samples in the same apply as the rest", arguments: Backend.allCases)
    func writerAppliesSamples(backend: Backend) async throws {
        let registry = try backend.makeRegistry()
        try registry.merge(try MembersCSV.parse("\(header)\nana,Ana,,ibeacon:\(SurveySamples.uuid):1:1,,0,,", file: "m.csv"))
        let writer = try RegistryWriter(
            registry: registry, stores: [1], logger: Logger(label: "test"),
            clock: { Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)) })
        let samples = SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 10, from: 0, seconds: 5)
        var changes = RegistryChanges()
        changes.addSurveySamples(Array(samples.prefix(3)))
        changes.countVisit(of: "ana", at: Timestamp(milliseconds: 7))
        writer.enqueue(changes)
        var more = RegistryChanges()
        more.addSurveySamples(Array(samples.suffix(2)))
        writer.enqueue(more)
        #expect(await writer.close(timeout: .seconds(10)))
        #expect(try registry.surveySamples(store: 1) == samples)
        #expect(try registry.member(id: "ana")?.profile.visits == 1)
    }

    @Test(
        "forget deletes the samples of the member's beacons and leaves nothing of them; other beacons' samples stay",
        arguments: Backend.allCases)
    func forgetDeletesSamples(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let registry = try database.open()
        let zq = "ibeacon:\(SurveySamples.uuid):9:77"
        try registry.merge(
            try MembersCSV.parse("\(header)\nzq,Zebulon,,\(zq),,0,,\nana,Ana,,\(SurveySamples.beacon(1).description),,0,,", file: "m.csv"))
        let theirs = SurveySamples.walk(beacon: BeaconKey(zq)!, department: 10, from: 0, seconds: 4)
        let anas = SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 10, from: 0, seconds: 3)
        let staff = SurveySamples.walk(beacon: SurveySamples.beacon(5), department: 20, from: 0, seconds: 2)
        try registry.addSurveySamples(theirs + anas + staff)
        #expect(try registry.forget(id: "zq"))
        #expect(try registry.surveySamples(store: 1) == anas + staff)
        var published = RegistryChanges()
        for event in try registry.claimRegistryEvents(for: "test") { published.registryEventPublished(event.seq) }
        try registry.apply(published)
        for (place, bytes) in try database.everythingStored() {
            #expect(bytes.range(of: Data(zq.utf8)) == nil, "\(zq) is still in \(place)")
        }
    }

    @Test("the provisioned coordinator role adds samples and saves and reads fits, also on a registry upgraded after it was provisioned")
    func coordinatorRole() throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        try server.psql("CREATE ROLE owner LOGIN CREATEROLE PASSWORD 'ownerpw'")
        try server.psql("CREATE DATABASE chain OWNER owner")
        let hba = server.directory + "/data/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("host all owner,store 127.0.0.1/32 scram-sha-256\n" + rules).write(toFile: hba, atomically: true, encoding: .utf8)
        try server.psql("SELECT pg_reload_conf()")
        let ownerURL = "postgres://owner@127.0.0.1:\(server.port)/chain"
        func owner() throws -> PostgresRegistry {
            try #require(
                try RegistryLocation(ownerURL).open(environment: [RegistryLocation.passwordVariable: "ownerpw"]) as? PostgresRegistry)
        }
        func store() throws -> any MemberRegistry & SurveyRegistry {
            try RegistryLocation("postgres://store@127.0.0.1:\(server.port)/chain").open(
                environment: [RegistryLocation.passwordVariable: "Secret42"])
        }
        func check(_ registry: any MemberRegistry & SurveyRegistry) throws {
            var changes = RegistryChanges()
            changes.addSurveySamples(SurveySamples.store())
            try registry.apply(changes, batch: UUID().uuidString, stores: [1])
            let fit = try SurveySamples.fit(try registry.surveySamples(store: 1))
            try registry.saveSurveyFit(fit)
            #expect(try registry.surveyFit(store: 1) == fit)
            #expect(try registry.surveyFitVersions()[1] != nil)
            #expect(try registry.clearSurvey(store: 1).fit)
        }
        try owner().provisionRole("store", password: "Secret42")
        try check(try store())

        // A registry provisioned before surveys existed: the owner's next opening adds the tables, granted.
        try server.psql(
            "DROP TABLE survey_sample, survey_fit, survey_version; DELETE FROM schema_migration WHERE version IN (4, 8)", database: "chain")
        #expect(throws: (any Error).self) { try store().surveyFitVersions() }
        _ = try owner()
        try check(try store())
    }
}

/// A database that never answers: every write fails.
private final class UnreachableRegistry: RegistryWriting {
    struct Unreachable: Error {}

    var location: String { "nowhere" }
    func describe(_ error: any Error) -> String { "unreachable" }
    func apply(_ changes: RegistryChanges, batch: String?, stores: Set<UInt16>?) throws { throw Unreachable() }
}
