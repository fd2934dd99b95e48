import Testing

@testable import BeaconMeshCore

/// The forward filter a surveyed store's members are decided on (`PresenceEngine.SurveyBelief`, issue 51).
@Suite("Presence engine, surveyed store: the belief over departments")
struct SurveyBeliefTests {
    typealias Belief = PresenceEngine.SurveyBelief

    /// When the member's first `moved` came out, if she moved.
    static func movedAt(_ script: StoreScript, last: Bool = false) -> Timestamp? {
        var moved: Timestamp?
        for output in script.outputs {
            if case .moved(_, _, _, _, let at, _) = output {
                moved = at
                if !last { break }
            }
        }
        return moved
    }

    @Test("a second downstairs does not move a member who has been upstairs; a lasting move does, within 3 s")
    func burstsStayLastingMovesMove() throws {
        var script = try SurveyPresenceTests.surveyed()
        script.hold(.seconds(20), SurveyPresenceTests.upstairs)
        script.hold(.seconds(1), SurveyPresenceTests.downstairs)
        // The kitchen's node stops hearing her and says so (else its reading stays fresh for `staleAfter`).
        script.now = script.now + .milliseconds(500)
        script.batch(SurveyPresenceTests.upstairs, lost: [30])
        script.hold(.seconds(10), SurveyPresenceTests.upstairs)
        #expect(script.story == ["arrived 20"])

        let start = script.now
        script.hold(.seconds(6), SurveyPresenceTests.downstairs)
        #expect(script.story == ["arrived 20", "moved 20→10"])
        let moved = try #require(Self.movedAt(script))
        #expect(moved - start <= .seconds(3), "moved \(moved - start) after she went downstairs")
    }

    @Test("after a long stay the confidence is the belief's, near 1, and the reason names the department")
    func confidenceIsTheBelief() throws {
        var script = try SurveyPresenceTests.surveyed()
        script.hold(.seconds(30), SurveyPresenceTests.upstairs, jitter: 2)
        script.hold(.seconds(6), SurveyPresenceTests.downstairs)
        guard case .moved(_, _, _, _, _, let evidence)? = script.outputs.first(where: { if case .moved = $0 { true } else { false } })
        else {
            Issue.record("no move: \(script.story)")
            return
        }
        #expect(evidence.reason.hasPrefix("survey: department 10 "), "\(evidence.reason)")
        #expect(evidence.confidence > 0.5 && evidence.confidence <= 1, "\(evidence.confidence)")
    }

    @Test("evidence counts by time: deciding twice at one instant adds nothing, and two half seconds weigh as one second")
    func evidenceCountsByTime() {
        let evidence = [-0.05, -3.0, -6.0]
        var once = Belief()
        var beliefOnce: [Double] = []
        once.advance(evidence: evidence, generation: 1, current: 1, at: 0, into: &beliefOnce)
        once.advance(evidence: evidence, generation: 1, current: 1, at: 1_000, into: &beliefOnce)
        var again = once
        var beliefAgain: [Double] = []
        again.advance(evidence: evidence, generation: 1, current: 1, at: 1_000, into: &beliefAgain)
        for index in beliefOnce.indices { #expect(abs(beliefOnce[index] - beliefAgain[index]) < 1e-6) }

        var halves = Belief()
        var beliefHalves: [Double] = []
        halves.advance(evidence: evidence, generation: 1, current: 1, at: 0, into: &beliefHalves)
        halves.advance(evidence: evidence, generation: 1, current: 1, at: 500, into: &beliefHalves)
        halves.advance(evidence: evidence, generation: 1, current: 1, at: 1_000, into: &beliefHalves)
        #expect(abs(beliefHalves[0] - beliefOnce[0]) < 0.05, "\(beliefHalves) against \(beliefOnce)")
        // The probabilities are a distribution, and the likeliest is where the evidence points.
        let total = beliefOnce.reduce(0) { $0 + $1 }
        #expect(abs(total - 1) < 1e-6)
        #expect(once.departments[0] == 0)
    }

    @Test("a fresh belief keeps the member where she is; another fit's belief, or one unheard for 30 s, starts afresh")
    func freshBeliefs() {
        var belief = Belief()
        var values: [Double] = []
        belief.advance(evidence: [-0.7, -0.7, -0.7], generation: 1, current: 2, at: 0, into: &values)
        #expect(belief.departments[0] == 2, "even evidence leaves her where she is")

        let sure = [-20.0, -20.0, 0.0]
        for second in 1...10 { belief.advance(evidence: sure, generation: 1, current: 2, at: Int64(second) * 1_000, into: &values) }
        #expect(values[2] > 0.99)
        belief.advance(evidence: [-0.7, -0.7, -0.7], generation: 2, current: 0, at: 11_000, into: &values)
        #expect(belief.departments[0] == 0, "a new fit: she stays where the decisions have her")
        belief.advance(evidence: sure, generation: 2, current: 0, at: 12_000, into: &values)
        belief.advance(evidence: [-0.7, -0.7, -0.7], generation: 2, current: 1, at: 43_000, into: &values)
        #expect(belief.departments[0] == 1, "unheard for 31 s: she starts afresh where the decisions have her")
    }

    @Test("a store of twelve departments keeps the likeliest four; the rest share what is left")
    func keepsTheLikeliest() {
        var evidence = [Double](repeating: -8, count: 12)
        evidence[7] = -0.01
        evidence[3] = -5
        var belief = Belief()
        var values: [Double] = []
        for second in 0...5 { belief.advance(evidence: evidence, generation: 1, current: -1, at: Int64(second) * 1_000, into: &values) }
        #expect(belief.count == Belief.kept)
        #expect(belief.departments[0] == 7)
        #expect(belief.departments[1] == 3)
        let total = values.reduce(0) { $0 + $1 }
        #expect(abs(total - 1) < 1e-3, "\(total)")
    }
}

extension SurveyBeliefTests {
    @Test("a fit sure of itself (one quiet walk) does not flap on noisy readings of a member who stays upstairs")
    func overconfidentFitDoesNotFlap() throws {
        let samples = SurveyHouse.samples(seconds: 20, stretches: 1, jitter: 1)
        let fit = try SurveyTraining(samples: samples, store: 1).fit(at: Timestamp(milliseconds: 1)).fit
        var changes = 0
        for seed in [1, 2, 3, 4] as [UInt64] {
            var script = StoreScript()
            script.random = SplitMix64(seed: seed)
            script.engine.setSurvey(fit, store: 1)
            for _ in 0..<60 {
                script.hold(.seconds(1), SurveyPresenceTests.upstairs, jitter: 4)
                // Now and then the kitchen's node hears her faintly through the wall: the walk never had it hear upstairs.
                if script.random.uniform(0, 1) < 0.3 {
                    script.now = script.now + .milliseconds(500)
                    script.batch(SurveyPresenceTests.upstairs.merging([30: -80 + script.random.uniform(-4, 4)]) { a, _ in a })
                    script.now = script.now + .milliseconds(500)
                    script.batch(SurveyPresenceTests.upstairs, lost: [30])
                }
            }
            changes += script.story.filter { $0.hasPrefix("moved") }.count
        }
        #expect(changes == 0)
    }
}
