import Testing

@testable import BeaconMeshDashboard

@Suite("Sign-in limiter")
struct SignInLimiterTests {
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }

    @Test("10 failures for one name within a minute block that name for a minute, from any address; the block starts once")
    func nameIsBlocked() {
        var limiter = SignInLimiter()
        for attempt in 0..<9 {
            #expect(limiter.failed(name: "anna", address: "10.0.0.\(attempt)", at: at(Double(attempt))).isEmpty)
            #expect(!limiter.isBlocked(name: "anna", address: "10.0.0.99", at: at(Double(attempt))))
        }
        #expect(limiter.failed(name: "anna", address: "10.0.0.9", at: at(9)) == [.name("anna")])
        #expect(limiter.isBlocked(name: "anna", address: "192.168.1.1", at: at(9)))
        #expect(!limiter.isBlocked(name: "bert", address: "192.168.1.1", at: at(9)), "another name from a fresh address")
        #expect(limiter.isBlocked(name: "anna", address: "192.168.1.1", at: at(68.9)))
        #expect(!limiter.isBlocked(name: "anna", address: "192.168.1.1", at: at(69)), "the block lasts a minute")
    }

    @Test("10 failures from one address within a minute block it for every name")
    func addressIsBlocked() {
        var limiter = SignInLimiter()
        var started: [SignInLimiter.Key] = []
        for attempt in 0..<10 { started += limiter.failed(name: "guess\(attempt)", address: "10.1.1.1", at: at(Double(attempt) * 5)) }
        #expect(started == [.address("10.1.1.1")])
        #expect(limiter.isBlocked(name: "somebody", address: "10.1.1.1", at: at(46)))
        #expect(!limiter.isBlocked(name: "somebody", address: "10.1.1.2", at: at(46)))
    }

    @Test("failures spread over more than a minute never block")
    func slowFailuresDoNotBlock() {
        var limiter = SignInLimiter()
        for attempt in 0..<30 {
            #expect(limiter.failed(name: "anna", address: "10.0.0.1", at: at(Double(attempt) * 7)).isEmpty, "attempt \(attempt)")
        }
        #expect(!limiter.isBlocked(name: "anna", address: "10.0.0.1", at: at(210)))
    }

    @Test("failures while blocked do not start the block again or lengthen it")
    func blockIsNotExtended() {
        var limiter = SignInLimiter()
        for attempt in 0..<10 { _ = limiter.failed(name: "anna", address: "a", at: at(Double(attempt) / 10)) }
        for attempt in 0..<20 { #expect(limiter.failed(name: "anna", address: "b\(attempt)", at: at(30)).isEmpty) }
        #expect(!limiter.isBlocked(name: "anna", address: "c", at: at(61)))
    }
}
