import BeaconMeshCore
import BeaconMeshRegistry
import Testing

@testable import BeaconMeshCoordinator

/// The fence: until when a coordinator may decide for a store, from its renewals and the monotonic clock alone.
@Suite("Lease book")
struct LeaseBookTests {
    static let t0 = ContinuousClock.now
    static let since = LeaseGrant(since: Timestamp(milliseconds: 1_763_769_600_000), fenced: true)

    @Test("a store is held until ttl minus a quarter of it after the renewal was sent, however late the answer came")
    func heldUntilMargin() {
        var book = LeaseBook(ttl: .seconds(4))
        #expect(book.margin == .seconds(1) && book.renewInterval == .seconds(1))
        book.renewed([1: Self.since], sentAt: Self.t0)
        #expect(book.holds(1, at: Self.t0 + .milliseconds(2999)))
        #expect(!book.holds(1, at: Self.t0 + .seconds(3)))
        #expect(!book.holds(2, at: Self.t0))
        #expect(book.nextExpiry == Self.t0 + .seconds(3))
        // A renewal sent at 2 s, answered whenever: held until 5 s, never longer.
        book.renewed([1: Self.since], sentAt: Self.t0 + .seconds(2))
        #expect(book.held(at: Self.t0 + .milliseconds(4999)) == [1])
        #expect(book.held(at: Self.t0 + .seconds(5)).isEmpty)
    }

    @Test("a renewal that does not return a store ends its hold at once")
    func lostInRenewal() {
        var book = LeaseBook(ttl: .seconds(2))
        book.renewed([1: Self.since, 2: Self.since], sentAt: Self.t0)
        book.renewed([2: Self.since], sentAt: Self.t0 + .milliseconds(500))
        #expect(book.held(at: Self.t0 + .milliseconds(600)) == [2])
        #expect(book.since == [2: Self.since.since])
    }

    @Test("a store nobody stands by for is held until a renewal says otherwise")
    func alone() {
        var book = LeaseBook(ttl: .seconds(2))
        book.renewed([1: LeaseGrant(since: Self.since.since, fenced: false)], sentAt: Self.t0)
        #expect(book.holds(1, at: Self.t0 + .seconds(3600)))
        book.renewed([:], sentAt: Self.t0 + .seconds(3600))
        #expect(!book.holds(1, at: Self.t0 + .seconds(3600)))
    }

    @Test("with no renewal (a database away, a paused process) every hold runs out, and expire forgets them")
    func runsOut() {
        var book = LeaseBook(ttl: .seconds(2))
        book.renewed([1: Self.since, 2: Self.since], sentAt: Self.t0)
        #expect(book.expire(at: Self.t0 + .seconds(1)).isEmpty)
        #expect(book.expire(at: Self.t0 + .seconds(60)) == [1, 2])
        #expect(book.nextExpiry == nil && book.held(at: Self.t0).isEmpty)
    }
}
