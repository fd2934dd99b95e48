import Testing

@testable import BeaconMeshCore

@Suite("Presence engine, surveyed store")
struct SurveyPresenceTests {
    static let upstairs: [UInt16: Double] = [10: -61, 20: -67]
    static let downstairs: [UInt16: Double] = [10: -56, 20: -79, 30: -71]

    static func surveyed() throws -> StoreScript {
        var script = StoreScript()
        script.engine.setSurvey(try SurveyHouse.fit(), store: 1)
        return script
    }

    @Test("a member upstairs, heard loudest downstairs through the floor, arrives upstairs in a surveyed store")
    func arrivesWhereTheSurveySays() throws {
        var plain = StoreScript()
        plain.hold(.seconds(3), Self.upstairs)
        #expect(plain.story == ["arrived 10"])

        var script = try Self.surveyed()
        script.hold(.seconds(3), Self.upstairs)
        #expect(script.story == ["arrived 20"])
        guard case .arrived(_, _, _, _, let evidence)? = script.outputs.first(where: { if case .arrived = $0 { true } else { false } })
        else {
            Issue.record("no arrival")
            return
        }
        #expect(evidence.confidence >= 0.9)
        #expect(evidence.reason.hasPrefix("survey: department 20 "), "\(evidence.reason)")
        #expect(evidence.reason.contains("node a -6"))
        #expect(script.engine.visit(of: "ana")?.confidence == evidence.confidence)
    }

    @Test("moves between surveyed departments keep the hysteresis: ±3 dB of noise stays, a lasting move moves, then leaves")
    func hysteresis() throws {
        var script = try Self.surveyed()
        script.hold(.seconds(20), Self.upstairs, jitter: 3)
        #expect(script.story == ["arrived 20"])
        script.hold(.seconds(6), Self.downstairs)
        #expect(script.story == ["arrived 20", "moved 20→10"])
        script.hold(.seconds(15))
        #expect(script.story == ["arrived 20", "moved 20→10", "left 10"])
    }

    @Test("a surveyed member is decided at most every 250 ms: a batch sooner after a decision is decided on the tick 250 ms after it")
    func decisionsAreSpaced() throws {
        var script = try Self.surveyed()
        script.hold(.seconds(3), Self.upstairs)
        #expect(script.story == ["arrived 20"])
        let decided = script.now  // the last step's first batch was decided; the second waits for decided + 250 ms
        script.now = decided + .milliseconds(100)
        script.batch([20: -67])
        #expect(script.engine.visit(of: "ana")?.lastSeen == decided, "decided at once, 100 ms after the last decision")
        script.outputs += script.engine.tick(at: decided + .milliseconds(249))
        #expect(script.engine.visit(of: "ana")?.lastSeen == decided)
        script.outputs += script.engine.tick(at: decided + .milliseconds(250))
        #expect(script.engine.visit(of: "ana")?.lastSeen == decided + .milliseconds(100), "not decided 250 ms after the last decision")

        // A store without a survey decides every batch at once.
        var plain = StoreScript()
        plain.hold(.seconds(3), Self.upstairs)
        plain.now = plain.now + .milliseconds(100)
        plain.batch([20: -67])
        #expect(plain.engine.visit(of: "ana")?.lastSeen == plain.now)
    }

    @Test("clearing the survey goes back to the loudest node, and a fit for another store changes nothing here")
    func clearing() throws {
        var script = StoreScript()
        var other = try SurveyHouse.fit()
        other.store = 2
        script.engine.setSurvey(other, store: 2)
        script.hold(.seconds(3), Self.upstairs)
        #expect(script.story == ["arrived 10"])

        var surveyed = try Self.surveyed()
        surveyed.engine.setSurvey(nil, store: 1)
        surveyed.hold(.seconds(3), Self.upstairs)
        #expect(surveyed.story == ["arrived 10"])
        #expect(surveyed.engine.survey(of: 1) == nil)
    }

    @Test("a surveyor's readings are the nodes' smoothed readings, fresh ones only, members and guests alike")
    func surveyReadings() throws {
        var script = StoreScript()
        script.hold(.seconds(2), [10: -60, 20: -70])
        let member = script.engine.surveyReadings(of: StoreScript.phone, store: 1, at: script.now)
        #expect(member?.keys.sorted() == [SurveyHouse.node(10), SurveyHouse.node(20)])
        #expect(abs((member?[SurveyHouse.node(10)] ?? 0) + 60) < 0.5)
        script.batch([30: -66], beacon: StoreScript.guest)
        #expect(script.engine.surveyReadings(of: StoreScript.guest, store: 1, at: script.now) == [SurveyHouse.node(30): -66])
        #expect(script.engine.surveyReadings(of: StoreScript.guest, store: 2, at: script.now) == nil)
        script.now = script.now + .seconds(4)
        #expect(script.engine.surveyReadings(of: StoreScript.phone, store: 1, at: script.now) == nil)
    }

    @Test("readings unlike the survey's make the store's survey stale; readings like it do not")
    func staleness() throws {
        var script = try Self.surveyed()
        script.hold(.seconds(60), Self.upstairs, jitter: 2)
        #expect(script.engine.surveyFitness[1]?.isStale == false)
        #expect((script.engine.surveyFitness[1]?.checks ?? 0) >= 100)
        // The upstairs node moved to the garden: it hears the member 25 dB weaker than the survey did.
        script.hold(.seconds(120), [10: -61, 20: -92, 30: -60], jitter: 2)
        #expect(script.engine.surveyFitness[1]?.isStale == true)
    }
}

extension SurveyPresenceTests {
    @Test("a store's reference is no guest: it counts in no department, yet its readings are there for survey samples")
    func referencesAreNoGuests() {
        var script = StoreScript()
        script.hold(.seconds(2), [20: -60], beacon: StoreScript.guest)
        #expect(script.engine.guestCounts(store: 1, at: script.now)[20] == 1, "a guest before it is a reference")
        script.engine.setReferences([StoreScript.guest])
        script.hold(.seconds(2), [20: -60, 10: -75], beacon: StoreScript.guest)
        #expect(script.engine.guestCounts(store: 1, at: script.now).values.reduce(0, +) == 0)
        let readings = script.engine.surveyReadings(of: StoreScript.guest, store: 1, at: script.now)
        #expect(readings?[SurveyNode(department: 20, node: "a")] == -60)
        #expect(readings?.count == 2)
        #expect(script.story.isEmpty)
    }
}
