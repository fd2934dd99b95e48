import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshService
import BeaconMeshTesting
import BeaconMeshWire
import Testing

@testable import BeaconMeshCoordinator

/// Store leases on the service's seams: a coordinator service on the in-memory broker, a manual clock and in-memory
/// leases that follow `PostgresLeases`' rules on that clock. The shell reads its monotonic time from the service's
/// clock (`ServiceClock.instant()`), so a lease runs out when the test moves the clock, not when the wall's time has
/// passed. (The keeper's renewals still come at their real pace, a quarter of the ttl: at most 2 s here.)
@Suite("Store leases, in memory", .timeLimit(.minutes(2)))
struct LeaseServiceTests {
    static let ttl: Duration = .seconds(8)

    /// The stores the coordinator last said it decides for, once it says `active` (within `timeout` of real time).
    static func status(of fixture: CoordinatorFixture, saying active: [UInt16], timeout: Duration = .seconds(10)) async -> [UInt16]? {
        let topic = CoordinatorFixture.topics.coordinatorStatus(id: "hq")
        var last: [UInt16]?
        _ = await eventually(timeout: timeout) { () -> Bool in
            guard let message = try? fixture.broker.publications(matching: topic).last,
                let status = try? WireCodec.decodeCoordinatorStatus(message.payload)
            else { return false }
            last = status.active
            return status.active == active
        }
        return last
    }

    @Test("a standby takes the store over once the holder's lease ran out on the database's clock, and greets")
    func takeOver() async throws {
        let fixture = try CoordinatorFixture(leaseTTL: Self.ttl)
        defer { fixture.removeFolder() }
        let leases = try #require(fixture.leases)
        // Another coordinator holds store 1 before this one starts.
        #expect(try leases.claim([1], for: "other", ttl: Self.ttl)[1] != nil)
        let running = Task { try await fixture.service.run() }
        #expect(await Self.status(of: fixture, saying: []) == [])
        // Its next renewal learns that "hq" stands by, so it must fence: its lease may now run out.
        #expect(await eventually(timeout: .seconds(10)) { (try? leases.claim([1], for: "other", ttl: Self.ttl))?[1]?.fenced == true })

        // The other never renews again: past the ttl on the database's clock, "hq"'s next claim takes the store.
        await fixture.advance(by: Self.ttl + .milliseconds(200))
        #expect(await Self.status(of: fixture, saying: [1]) == [1])
        #expect(try leases.holders()[1]?.holder == "hq")
        let events = try await fixture.hearAnaUntilGreeted().map { try WireCodec.decodeEvent($0.payload) }
        guard case .arrived(let member, _, _, _, _, _) = try #require(events.last).kind else {
            Issue.record("no arrival: \(events.map(\.type))")
            return
        }
        #expect(member.id == "ana")
        running.cancel()
        _ = try? await running.value
    }

    @Test(
        "a holder gone without fencing (nobody stood by when it last renewed): from its lease's end nobody decides the store, the standby says so on the alerts topic once, after the rule's duration, and takes the store once the grace is over"
    )
    func storeUndecidedAlert() async throws {
        let rule = AlertRule(id: "nobody-decides", stores: .all, when: .storeUndecided(over: .seconds(1)))
        let fixture = try CoordinatorFixture(leaseTTL: Self.ttl, alerts: [rule])
        defer { fixture.removeFolder() }
        let leases = try #require(fixture.leases)
        // "ghost" holds store 1 alone (unfenced) and is gone before "hq" starts. The grace: 2 s (a quarter of 8 s).
        #expect(try leases.claim([1], for: "ghost", ttl: Self.ttl)[1]?.fenced == false)
        let running = Task { try await fixture.service.run() }
        #expect(await Self.status(of: fixture, saying: []) == [])
        let alerts = CoordinatorFixture.topics.alerts(store: 1)
        let expiry = try #require(try leases.holders()[1]?.expiresAt)
        /// Waits for the keeper's next renewal (it claims at its real pace, a quarter of the ttl).
        func nextRenewal() async -> Bool {
            let before = leases.claims(of: "hq")
            return await eventually(timeout: .seconds(10)) { leases.claims(of: "hq") > before ? true : nil } == true
        }
        // Just past the lease's end, within the grace: a renewal says nobody decides store 1 since its expiry.
        await fixture.advance(by: Self.ttl + .milliseconds(100))
        #expect(await nextRenewal())
        #expect(await Self.status(of: fixture, saying: []) == [], "within the grace the store is not taken")
        await fixture.advance(by: .milliseconds(1200))
        let published = await eventually(timeout: .seconds(10)) { () async -> [MQTTMessage]? in
            await fixture.advance(by: .milliseconds(10))
            let found = try? fixture.broker.publications(matching: alerts)
            return found?.isEmpty == false ? found : nil
        }
        let alert = try WireCodec.decodeAlert(try #require(published?.first).payload)
        #expect(alert.kind == .storeUndecided && alert.rule == "nobody-decides" && alert.store == 1)
        #expect(alert.text == "Nobody has decided store 1 for 1 s")
        #expect(alert.at - expiry >= .seconds(1), "not before the rule's 1 s: \(alert.at - expiry)")
        #expect(alert.id == "nobody-decides/store-1/\(expiry.milliseconds)", "one id whoever tells it")
        #expect(try fixture.broker.publications(matching: alerts).count == 1, "once per spell")
        // Past the grace, hq's next renewal takes the store: the gap a lone holder's death left is closed.
        await fixture.advance(by: .seconds(1))
        #expect(await nextRenewal())
        #expect(await Self.status(of: fixture, saying: [1]) == [1], "an unfenced lease past its grace is taken over")
        running.cancel()
        _ = try? await running.value
    }

    @Test("a holder cut off from the database stops deciding once ttl − margin passed on its clock, not the wall's")
    func fenceOnTheServiceClock() async throws {
        let fixture = try CoordinatorFixture(leaseTTL: Self.ttl)
        defer { fixture.removeFolder() }
        let leases = try #require(fixture.leases)
        let running = Task { try await fixture.service.run() }
        #expect(await Self.status(of: fixture, saying: [1]) == [1])
        // A standby lists store 1; the holder's next renewal (within 2 s) says to fence.
        #expect(try leases.claim([1], for: "standby", ttl: Self.ttl).isEmpty)
        #expect(await eventually(timeout: .seconds(10)) { (try? leases.holders())?[1]?.fenced == true })
        _ = try await fixture.hearAnaUntilGreeted()

        // Cut off: no renewal succeeds now. The last one was sent at most 1.2 s of this clock ago (Ana's greeting
        // advanced it), so 6.2 s more passes the ttl − margin (6 s) after it; the wall's time has hardly moved.
        leases.cut("hq")
        await fixture.advance(by: .milliseconds(6_200))
        #expect(await Self.status(of: fixture, saying: [], timeout: .seconds(3)) == [], "still deciding store 1")
        running.cancel()
        _ = try? await running.value
    }
}
