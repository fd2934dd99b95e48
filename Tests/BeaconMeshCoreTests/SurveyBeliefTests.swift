import Testing

@testable import BeaconMeshCore

/// The temporal stage of a surveyed store's decisions: a belief carried from one decision to the next, switched on
/// under the contract's promises (an overwhelming move as fast as an unsurveyed store's decisive one, members
/// present kept until the evidence moves them).
@Suite("Presence engine, surveyed store: the belief")
struct SurveyBeliefTests {
    /// How long after the readings change from `from` to `to` (a batch of every node each 250 ms) the member moves;
    /// `nil` if they do not within 10 s.
    static func moveTime(_ script: inout StoreScript, from: [UInt16: Double], to: [UInt16: Double]) -> Duration? {
        script.hold(.seconds(10), from)
        let moves = script.story.count
        let start = script.now
        for _ in 0..<40 {
            script.now = script.now + .milliseconds(250)
            script.batch(to)
            script.outputs += script.engine.tick(at: script.now)
            if script.story.count > moves { return script.now - start }
        }
        return nil
    }

    @Test("an overwhelming move is as fast as an unsurveyed store's decisive one (a third of switchDwell), never faster")
    func overwhelmingMove() throws {
        let garden = SurveyHouse.sounds[30]!
        let downstairs = SurveyHouse.sounds[10]!
        var plain = StoreScript()
        let decisive = try #require(Self.moveTime(&plain, from: garden, to: downstairs))
        #expect(plain.story == ["arrived 30", "moved 30→10"])

        var script = try SurveyPresenceTests.surveyed()
        let surveyed = try #require(Self.moveTime(&script, from: garden, to: downstairs))
        #expect(script.story == ["arrived 30", "moved 30→10"])
        #expect(surveyed >= .seconds(1), "a third of switchDwell")
        #expect(surveyed <= decisive + .milliseconds(750), "surveyed \(surveyed), unsurveyed \(decisive)")
    }

    @Test("to a department that is not a neighbour an overwhelming move takes twice as long, as in an unsurveyed store")
    func overwhelmingMoveToAFarDepartment() throws {
        let garden = SurveyHouse.sounds[30]!
        let downstairs = SurveyHouse.sounds[10]!
        var near = try SurveyPresenceTests.surveyed()
        let neighbour = try #require(Self.moveTime(&near, from: garden, to: downstairs))
        var far = StoreScript(neighbours: [30: [20]])
        far.engine.setSurvey(try SurveyHouse.fit(), store: 1)
        let notNeighbour = try #require(Self.moveTime(&far, from: garden, to: downstairs))
        #expect(far.story == ["arrived 30", "moved 30→10"])
        #expect(notNeighbour >= neighbour + .milliseconds(750), "neighbour \(neighbour), not a neighbour \(notNeighbour)")
        #expect(notNeighbour >= .seconds(2), "two thirds of switchDwell")
    }

    @Test("a member restored upstairs after a restart stays there on upstairs readings and moves on downstairs ones, not at once")
    func restoredMemberStays() throws {
        var before = try SurveyPresenceTests.surveyed()
        before.hold(.seconds(5), SurveyPresenceTests.upstairs)
        #expect(before.story == ["arrived 20"])
        var after = before.restarted(after: .seconds(2))
        after.engine.setSurvey(try SurveyHouse.fit(), store: 1)
        after.hold(.seconds(10), SurveyPresenceTests.upstairs, jitter: 2)
        #expect(after.story.isEmpty)
        after.batch(SurveyHouse.sounds[10]!)
        #expect(after.story.isEmpty, "one batch is not a move")
        after.hold(.seconds(4), SurveyHouse.sounds[10]!)
        #expect(after.story == ["moved 20→10"])
    }

    @Test("the confidence of a surveyed placement is the department's probability given the readings so far")
    func confidenceIsTheBelief() throws {
        var script = try SurveyPresenceTests.surveyed()
        script.hold(.seconds(5), SurveyPresenceTests.upstairs)
        let visit = try #require(script.engine.visit(of: "ana"))
        #expect(visit.department == 20)
        #expect(visit.confidence >= 0.9 && visit.confidence <= 1)
    }
}
