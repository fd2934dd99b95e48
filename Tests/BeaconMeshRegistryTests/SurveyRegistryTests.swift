import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import GRDB
import Testing

@testable import BeaconMeshRegistry

@Suite("Store surveys in the registry, on SQLite and on PostgreSQL")
struct SurveyRegistryTests {
    @Test(
        "samples come back as added, by beacon and time, only the store's; a second added twice is kept once", arguments: Backend.allCases)
    func samplesRoundTrip(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        let mine =
            SurveySamples.walk(beacon: SurveySamples.beacon(2), department: 20, from: 50_000, seconds: 5)
            + SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 10, from: 90_000, seconds: 4)
            + SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 30, from: 10_000, seconds: 3)
        let others = SurveySamples.walk(store: 2, beacon: SurveySamples.beacon(1), department: 10, from: 10_000, seconds: 6)
        try registry.addSurveySamples(mine + others)
        try registry.addSurveySamples(Array(mine.prefix(2)))
        let expected = mine.sorted { ($0.beacon.description, $0.at) < ($1.beacon.description, $1.at) }
        #expect(try registry.surveySamples(store: 1) == expected)
        #expect(try registry.surveySamples(store: 2) == others)
        #expect(try registry.surveySamples(store: 3).isEmpty)
        let unheard = SurveySample(
            store: 3, beacon: SurveySamples.beacon(1), department: 10, at: Timestamp(milliseconds: 1), readings: [:])
        try registry.addSurveySamples([unheard])
        #expect(try registry.surveySamples(store: 3) == [unheard], "a second no node heard is a sample too")
    }

    @Test(
        "each sample keeps where its department came from: seconds by source per department, samples as added", arguments: Backend.allCases)
    func sources(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        let walked = SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 10, from: 0, seconds: 4)
        let referenced = SurveySamples.walk(beacon: SurveySamples.beacon(2), department: 10, from: 0, seconds: 3).map { sample in
            var sample = sample
            sample.source = .reference
            return sample
        }
        var checkin = SurveySamples.walk(beacon: SurveySamples.beacon(3), department: 20, from: 0, seconds: 1)[0]
        checkin.source = .checkin
        try registry.addSurveySamples(walked + referenced + [checkin])
        #expect(try registry.surveySecondsBySource(store: 1) == [10: [.walk: 4, .reference: 3], 20: [.checkin: 1]])
        #expect(try registry.surveySeconds(store: 1) == [10: 7, 20: 1])
        #expect(try registry.surveySamples(store: 1).filter { $0.source == .reference } == referenced)
    }

    @Test(
        "the beacons a store hears, named: a member's by her id and name, a reference by its department; others left out",
        arguments: Backend.allCases)
    func surveyBeacons(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        let fob = SurveySamples.beacon(1)
        let reference = SurveySamples.beacon(2)
        let stranger = SurveySamples.beacon(3)
        try registry.merge([MemberRecord(profile: MemberProfile(id: "ana", name: "Ana Souza"), beacons: [fob], createdAt: nil)])
        let referenced = SurveySamples.walk(beacon: reference, department: 20, from: 0, seconds: 2).map { sample in
            var sample = sample
            sample.source = .reference
            return sample
        }
        try registry.addSurveySamples(referenced + SurveySamples.walk(beacon: stranger, department: 10, from: 0, seconds: 2))
        #expect(
            try registry.surveyBeacons([fob, reference, stranger], store: 1)
                == [fob: .member(id: "ana", name: "Ana Souza"), reference: .reference(department: 20)])
        #expect(
            try registry.surveyBeacons([fob, reference], store: 2) == [fob: .member(id: "ana", name: "Ana Souza")],
            "another store's reference")
        #expect(try registry.surveyBeacons([], store: 1).isEmpty)
    }

    @Test("seconds per department: one sample is one second, per store", arguments: Backend.allCases)
    func secondsPerDepartment(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        #expect(try registry.surveySeconds(store: 1).isEmpty)
        try registry.addSurveySamples(
            SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 10, from: 0, seconds: 24)
                + SurveySamples.walk(beacon: SurveySamples.beacon(2), department: 10, from: 0, seconds: 6)
                + SurveySamples.walk(beacon: SurveySamples.beacon(1), department: 20, from: 100_000, seconds: 7)
                + SurveySamples.walk(store: 2, beacon: SurveySamples.beacon(1), department: 30, from: 0, seconds: 9))
        #expect(try registry.surveySeconds(store: 1) == [10: 30, 20: 7])
        #expect(try registry.surveySeconds(store: 2) == [30: 9])
    }

    @Test("a fit comes back exactly as saved, and a new one replaces it; each save moves the store's version", arguments: Backend.allCases)
    func fitRoundTripAndReplacement(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        #expect(try registry.surveyFit(store: 1) == nil)
        #expect(try registry.surveyFitVersions().isEmpty)
        let first = try SurveySamples.fit(SurveySamples.store(), at: 5_000_000)
        try registry.saveSurveyFit(first)
        #expect(try registry.surveyFit(store: 1) == first)
        let afterFirst = try #require(try registry.surveyFitVersions()[1])

        let second = try SurveySamples.fit(SurveySamples.store(seconds: 40), at: 6_000_000)
        #expect(second != first)
        try registry.saveSurveyFit(second)
        #expect(try registry.surveyFit(store: 1) == second)
        let afterSecond = try #require(try registry.surveyFitVersions()[1])
        #expect(afterSecond != afterFirst)

        let other = try SurveySamples.fit(SurveySamples.store(2), store: 2)
        try registry.saveSurveyFit(other)
        #expect(try registry.surveyFit(store: 2) == other)
        #expect(try registry.surveyFit(store: 1) == second)
        #expect(try registry.surveyFitVersions()[1] == afterSecond, "another store's fit leaves this store's version")
        #expect(try Set(registry.surveyFitVersions().keys) == [1, 2])
        #expect(try Set(registry.surveyFitVersions(stores: [2, 7]).keys) == [2])
    }

    @Test(
        "clear deletes the store's samples and fit and moves its version; other stores keep theirs; a second clear finds nothing",
        arguments: Backend.allCases)
    func clear(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let registry = try database.open()
        let coordinator = try database.open()
        let samples = SurveySamples.store()
        try registry.addSurveySamples(samples + SurveySamples.store(2))
        try registry.saveSurveyFit(try SurveySamples.fit(samples))
        try registry.saveSurveyFit(try SurveySamples.fit(SurveySamples.store(2), store: 2))
        let before = try coordinator.surveyFitVersions()

        let cleared = try registry.clearSurvey(store: 1)
        #expect(cleared.samples == samples.count && cleared.fit)
        #expect(try registry.surveySamples(store: 1).isEmpty && registry.surveySeconds(store: 1).isEmpty)
        #expect(try registry.surveyFit(store: 1) == nil)
        let after = try coordinator.surveyFitVersions()
        #expect(after[1] != nil && after[1] != before[1], "a coordinator polling the versions sees the clear")
        #expect(after[2] == before[2])
        #expect(try registry.surveySamples(store: 2).count == SurveySamples.store(2).count)
        #expect(try registry.surveyFit(store: 2) != nil)

        let again = try registry.clearSurvey(store: 1)
        #expect(again.samples == 0 && !again.fit)
        #expect(try coordinator.surveyFitVersions()[1] == after[1], "clearing nothing moves no version")
    }

    @Test("bytes that are not a fit are refused in words, naming the store", arguments: [Backend.sqlite])
    func unreadableFit(backend: Backend) throws {
        let database = try backend.makeDatabase()
        let registry = try #require(try database.open() as? SQLiteRegistry)
        try registry.saveSurveyFit(try SurveySamples.fit(SurveySamples.store()))
        try registry.database.write { db in try db.execute(sql: "UPDATE survey_fit SET fit = x'424d534663'") }
        let refusal = #expect(throws: RegistryFailure.self) { _ = try registry.surveyFit(store: 1) }
        #expect(refusal?.kind == .damaged)
        #expect(refusal?.description.contains("store 1") == true && refusal?.description.contains("survey fit again") == true)
    }
}
