import BeaconMeshCore
import BeaconMeshRegistry
import Testing

@testable import BeaconMeshCoordinator

/// The webhook delivery rules, decided purely with time passed in: order, retries and their backoff, the 24-h expiry,
/// refusals, crossing off in groups, the stores delivered for and an outbox that fails.
@Suite("webhook dispatch")
struct WebhookDispatchTests {
    static let start = Timestamp(milliseconds: 1_800_000_000_000)
    static let stores: Set<UInt16> = [7]

    static func delivery(_ seq: Int64, store: UInt16 = 7, createdAt: Timestamp = start) -> WebhookDelivery {
        WebhookDelivery(seq: seq, endpoint: "crm", store: store, eventID: "e\(seq)", body: Array("{}".utf8), createdAt: createdAt)
    }

    /// The first delivery of a run to send, if the step is one.
    static func head(_ step: WebhookDispatch.Step) -> WebhookDelivery? {
        if case .send(let run) = step { run.first } else { nil }
    }

    /// A dispatch that has read `pending`.
    static func reading(_ pending: [WebhookDelivery], rules: WebhookDispatch.Rules = .init()) -> WebhookDispatch {
        var dispatch = WebhookDispatch(endpoint: "crm", rules: rules, at: start)
        #expect(dispatch.next(at: start, stores: stores) == .read(stores: stores, limit: rules.batch, countIfFull: true))
        _ = dispatch.read(pending, backlog: nil, stores: stores, at: start)
        return dispatch
    }

    @Test("the oldest first, one at a time; a failure holds back everything after it until its retry")
    func order() {
        var dispatch = Self.reading([Self.delivery(1), Self.delivery(2)])
        #expect(Self.head(dispatch.next(at: Self.start, stores: Self.stores)) == Self.delivery(1))
        let notes = dispatch.answered(Self.delivery(1), .failed("the receiver answered 500"), at: Self.start, jitter: 1)
        #expect(notes == [.failed(cause: "the receiver answered 500", first: true)])
        #expect(dispatch.health.failed == 1 && dispatch.health.failingSince == Self.start)
        #expect(dispatch.next(at: Self.start, stores: Self.stores) == .wait(until: Self.start + .seconds(1)))
        let later = Self.start + .seconds(1)
        dispatch.woke()
        #expect(dispatch.next(at: later, stores: Self.stores) == .read(stores: Self.stores, limit: 256, countIfFull: true))
        _ = dispatch.read([Self.delivery(1), Self.delivery(2)], backlog: nil, stores: Self.stores, at: later)
        #expect(Self.head(dispatch.next(at: later, stores: Self.stores)) == Self.delivery(1), "the failed one again, not the next")
        #expect(
            dispatch.answered(Self.delivery(1), .delivered(status: 200), at: later, jitter: 1) == [
                .recovered, .delivered(Self.delivery(1), status: 200),
            ])
        #expect(dispatch.health.error == nil && dispatch.health.failingSince == nil && dispatch.health.backlog == 1)
        #expect(dispatch.next(at: later, stores: Self.stores) == .crossOff([1]), "a second since the last removal: at once")
        _ = dispatch.crossedOff([1], at: later)
        #expect(Self.head(dispatch.next(at: later, stores: Self.stores)) == Self.delivery(2))
    }

    @Test("the backoff doubles from 1 s to the longest retry, scaled by the jitter, and starts over after a success")
    func backoff() {
        var dispatch = Self.reading([Self.delivery(1)])
        var now = Self.start
        var waits: [Duration] = []
        for _ in 0..<7 {
            #expect(Self.head(dispatch.next(at: now, stores: Self.stores)) == Self.delivery(1))
            _ = dispatch.answered(Self.delivery(1), .failed("no connection"), at: now, jitter: 0.5)
            guard case .wait(let until) = dispatch.next(at: now, stores: Self.stores) else {
                Issue.record("no wait after a failure")
                return
            }
            waits.append(until - now)
            now = until
            dispatch.woke()
            _ = dispatch.next(at: now, stores: Self.stores)
            _ = dispatch.read([Self.delivery(1)], backlog: nil, stores: Self.stores, at: now)
        }
        #expect(waits == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(15), .seconds(15)])
        #expect(dispatch.health.failed == 7)
        _ = dispatch.answered(Self.delivery(1), .delivered(status: 204), at: now, jitter: 0.5)
        _ = dispatch.crossedOff([1], at: now)
        _ = dispatch.read([Self.delivery(2)], backlog: nil, stores: Self.stores, at: now)
        _ = dispatch.answered(Self.delivery(2), .failed("no connection"), at: now, jitter: 1)
        #expect(dispatch.next(at: now, stores: Self.stores) == .wait(until: now + .seconds(1)))
    }

    @Test("a failure after 24 hours of retries gives the delivery up; a 4xx is refused at once; 408 and 429 are retried")
    func expiryAndRefusal() {
        let old = Self.delivery(1, createdAt: Self.start - .seconds(24 * 3600))
        var dispatch = Self.reading([old, Self.delivery(2), Self.delivery(3)])
        #expect(dispatch.answered(old, .failed("no connection"), at: Self.start, jitter: 1) == [.expired(old, cause: "no connection")])
        #expect(Self.head(dispatch.next(at: Self.start, stores: Self.stores)) == Self.delivery(2), "no backoff after giving up")
        #expect(
            dispatch.answered(Self.delivery(2), .refused(status: 404), at: Self.start, jitter: 1) == [
                .refused(Self.delivery(2), status: 404)
            ])
        #expect(Self.head(dispatch.next(at: Self.start, stores: Self.stores)) == Self.delivery(3))
        #expect(dispatch.health.expired == 1 && dispatch.health.refused == 1 && dispatch.health.failed == 0)
        #expect(dispatch.done == [1, 2], "both are crossed off")
    }

    @Test("a run is the oldest 64 in order; its answers are taken up to the first failure, which is sent first again")
    func runs() {
        let pending = (1...100).map { Self.delivery(Int64($0)) }
        var dispatch = Self.reading(pending)
        #expect(dispatch.next(at: Self.start, stores: Self.stores) == .send(Array(pending.prefix(64))))
        let notes = dispatch.answered(
            [.delivered(status: 200), .refused(status: 410), .failed("the receiver answered 503")], for: Array(pending.prefix(64)),
            at: Self.start, jitter: 1)
        #expect(
            notes == [
                .delivered(pending[0], status: 200), .refused(pending[1], status: 410),
                .failed(cause: "the receiver answered 503", first: true),
            ])
        #expect(dispatch.done == [1, 2])
        dispatch.woke()
        let later = Self.start + .seconds(1)
        _ = dispatch.next(at: later, stores: Self.stores)
        _ = dispatch.read(pending, backlog: nil, stores: Self.stores, at: later)
        #expect(dispatch.next(at: later, stores: Self.stores) == .crossOff([1, 2]))
        _ = dispatch.crossedOff([1, 2], at: later)
        #expect(dispatch.next(at: later, stores: Self.stores) == .send(Array(pending[2..<66])))
    }

    @Test("done deliveries are crossed off in groups of 64, or 200 ms after the last removal")
    func crossingOff() {
        let pending = (1...100).map { Self.delivery(Int64($0)) }
        var dispatch = Self.reading(pending)
        for delivery in pending.prefix(63) {
            #expect(Self.head(dispatch.next(at: Self.start, stores: Self.stores)) == delivery)
            _ = dispatch.answered(delivery, .delivered(status: 200), at: Self.start, jitter: 1)
        }
        #expect(Self.head(dispatch.next(at: Self.start, stores: Self.stores)) == pending[63])
        _ = dispatch.answered(pending[63], .delivered(status: 200), at: Self.start, jitter: 1)
        let group = Array(1...64).map(Int64.init)
        #expect(dispatch.next(at: Self.start, stores: Self.stores) == .crossOff(group))
        _ = dispatch.crossedOff(group, at: Self.start)
        _ = dispatch.answered(pending[64], .delivered(status: 200), at: Self.start, jitter: 1)
        #expect(Self.head(dispatch.next(at: Self.start + .milliseconds(199), stores: Self.stores)) == pending[65])
        #expect(dispatch.next(at: Self.start + .milliseconds(200), stores: Self.stores) == .crossOff([65]))
    }

    @Test("what was done but not crossed off is not sent again when the outbox is read again")
    func doneIsNotResent() {
        var dispatch = Self.reading([Self.delivery(1), Self.delivery(2)])
        _ = dispatch.answered(Self.delivery(1), .delivered(status: 200), at: Self.start, jitter: 1)
        dispatch.woke()
        _ = dispatch.next(at: Self.start, stores: Self.stores)
        _ = dispatch.read([Self.delivery(1), Self.delivery(2)], backlog: nil, stores: Self.stores, at: Self.start)
        #expect(Self.head(dispatch.next(at: Self.start, stores: Self.stores)) == Self.delivery(2))
        #expect(dispatch.health.backlog == 1)
    }

    @Test("nothing owed: a wait of a second, or until the done ones are due to be crossed off")
    func idle() {
        var dispatch = Self.reading([])
        #expect(dispatch.next(at: Self.start, stores: Self.stores) == .wait(until: Self.start + .seconds(1)))
        dispatch = Self.reading([Self.delivery(1)])
        _ = dispatch.answered(Self.delivery(1), .delivered(status: 200), at: Self.start + .milliseconds(50), jitter: 1)
        #expect(dispatch.next(at: Self.start + .milliseconds(50), stores: Self.stores) == .wait(until: Self.start + .milliseconds(200)))
    }

    @Test("a change of the stores delivered for (a lease gained or lost) reads the outbox again for the new ones")
    func storesChange() {
        var dispatch = Self.reading([Self.delivery(1)])
        #expect(dispatch.next(at: Self.start, stores: [7, 8]) == .read(stores: [7, 8], limit: 256, countIfFull: true))
        _ = dispatch.read([], backlog: nil, stores: [], at: Self.start)
        #expect(dispatch.next(at: Self.start, stores: []) == .wait(until: Self.start + .seconds(1)))
    }

    @Test("a long backlog is counted at most once a second and told down by what was done in between")
    func longBacklog() {
        let rules = WebhookDispatch.Rules(batch: 4)
        var dispatch = WebhookDispatch(endpoint: "crm", rules: rules, at: Self.start)
        _ = dispatch.next(at: Self.start, stores: Self.stores)
        let four = (1...4).map { Self.delivery(Int64($0)) }
        _ = dispatch.read(four, backlog: 1000, stores: Self.stores, at: Self.start)
        #expect(dispatch.health.backlog == 1000)
        for delivery in four { _ = dispatch.answered(delivery, .delivered(status: 200), at: Self.start, jitter: 1) }
        #expect(dispatch.health.backlog == 996)
        #expect(
            dispatch.next(at: Self.start + .milliseconds(500), stores: Self.stores) == .crossOff([1, 2, 3, 4]))
        _ = dispatch.crossedOff([1, 2, 3, 4], at: Self.start + .milliseconds(500))
        #expect(
            dispatch.next(at: Self.start + .milliseconds(500), stores: Self.stores)
                == .read(stores: Self.stores, limit: 4, countIfFull: false),
            "the whole batch went out: read on, without counting again within the second")
        #expect(
            dispatch.next(at: Self.start + .seconds(1), stores: Self.stores) == .read(stores: Self.stores, limit: 4, countIfFull: true))
    }

    @Test("an outbox that fails is left alone for 2 s, said once, and said again when it is back")
    func outboxFailing() {
        var dispatch = WebhookDispatch(endpoint: "crm", at: Self.start)
        _ = dispatch.next(at: Self.start, stores: Self.stores)
        #expect(dispatch.outboxFailed("database is locked", at: Self.start) == [.outboxFailing("database is locked")])
        #expect(dispatch.next(at: Self.start + .seconds(1), stores: Self.stores) == .wait(until: Self.start + .seconds(2)))
        #expect(dispatch.outboxFailed("database is locked", at: Self.start + .seconds(2)) == [])
        let back = Self.start + .seconds(4)
        #expect(dispatch.next(at: back, stores: Self.stores) == .read(stores: Self.stores, limit: 256, countIfFull: true))
        #expect(dispatch.read([Self.delivery(1)], backlog: nil, stores: Self.stores, at: back) == [.outboxBack])
        #expect(Self.head(dispatch.next(at: back, stores: Self.stores)) == Self.delivery(1))
    }
}
