import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshWire
import Logging
import Testing

@testable import BeaconMeshCoordinator

/// The decisions of a coordinator that shares its store with another through leases: inputs, time and the monotonic
/// clock in, actions out.
@Suite("Coordinator decisions under leases")
struct CoordinatorLeaseTests {
    typealias D = CoordinatorDecisionTests
    static let t0 = ContinuousClock.now
    static let ttl: Duration = .seconds(4)

    /// A coordinator `id` with leases for store 1 (it holds nothing until told).
    static func state(id: String = "backoffice-2") -> CoordinatorState {
        var configuration = CoordinatorConfiguration(id: id)
        // Members leave 2 s after they were last heard: longer than the registry's saved last-seen time is old at a
        // take-over, so a take-over that trusted it alone would end the visit.
        var rules = PresenceRules()
        rules.exitAfter = .seconds(2)
        configuration.presence = rules
        var store = CoordinatorConfiguration.Store(id: 1, name: "High Street")
        store.departments = [
            .init(id: 10, name: "Clothing", presence: rules),
            .init(id: 20, name: "Café", presence: rules, till: true),
        ]
        configuration.stores = [store]
        configuration.database = "postgres://chain@db/chain"
        var logger = Logger(label: "test.leases")
        logger.logLevel = .critical
        let ana = MemberProfile(id: "ana", name: "Ana", favoriteDrink: "flat white", visits: 4)
        let contents = RegistryContents(profiles: ["ana": ana], beaconOwners: [D.anaFob: "ana"], promoFires: [:])
        return CoordinatorState(
            configuration: configuration, start: .init(contents: contents, visits: [], handledCheckins: []),
            logger: logger, topics: Topics(), startedAt: D.start, healthInterval: .seconds(30), leaseTTL: ttl)
    }

    /// Ana heard in Clothing every 500 ms for `seconds` from `from`, ticking every 50 ms, with the monotonic clock
    /// `instant(at:)`; every action returned (a lease check before each input, as the shell does).
    static func walk(
        _ state: inout CoordinatorState, from: Timestamp, seconds: Int, seq: inout UInt64, heard: Bool = true,
        monotonic: (Timestamp) -> ContinuousClock.Instant
    ) -> [CoordinatorActions] {
        var all: [CoordinatorActions] = []
        for step in 0..<(seconds * 20) {
            let now = from + .milliseconds(Int64(step) * 50)
            if let fenced = state.checkLeases(at: monotonic(now)) { all.append(fenced) }
            if heard && step % 10 == 0 {
                seq += 1
                all.append(state.handle([D.batch(D.clothing, seq: seq, at: now)], at: now))
            }
            all.append(state.tick(at: now))
        }
        return all
    }

    static func instant(_ now: Timestamp) -> ContinuousClock.Instant { t0 + (now - D.start) }

    @Test("a standby hears the store but publishes, counts and writes nothing for it; its status says it decides nothing")
    func standbyIsSilent() throws {
        var state = Self.state()
        var seq: UInt64 = 0
        let actions = Self.walk(&state, from: D.start, seconds: 5, seq: &seq, monotonic: Self.instant)
        #expect(actions.allSatisfy { $0.publications.isEmpty && $0.registry.isEmpty && $0.snapshots.isEmpty })
        #expect(state.status.active.isEmpty && state.status.stores == [1])
    }

    @Test("a store taken over mid-survey samples the beacon its holder kept marked; a standby keeps no mark of its own")
    func takeOverMidSurvey() throws {
        var state = Self.state()
        var seq: UInt64 = 0
        let marked = state.handle([.surveyMark(SurveyMark(.member("ana"), department: 10, at: D.start), store: 1)], at: D.start)
        #expect(marked.registry.surveyMarks.isEmpty, "the holder keeps the mark, not a standby")
        _ = Self.walk(&state, from: D.start, seconds: 1, seq: &seq, monotonic: Self.instant)
        // A standby that started after the mark (here: one that forgot it) takes over: the registry's mark is restored.
        state.surveyMarks = SurveyMarks()
        let now = D.start + .seconds(1)
        _ = state.leasesRenewed([1: .init(since: now, fenced: true)], sentAt: Self.instant(now), at: now, instant: Self.instant(now))
        let kept = SurveyMarkRecord(store: 1, beacon: D.anaFob, department: 20, since: D.start)
        _ = state.tookOver(
            [1], loaded: .init(stores: [1], visits: [], promoFires: [:], handledCheckins: [], surveyMarks: [kept]), at: now,
            instant: Self.instant(now))
        var samples: [SurveySample] = []
        for second in 0..<3 {
            let at = now + .seconds(Int64(second))
            _ = state.leasesRenewed([1: .init(since: now, fenced: true)], sentAt: Self.instant(at), at: at, instant: Self.instant(at))
            samples += Self.walk(&state, from: at, seconds: 1, seq: &seq, monotonic: Self.instant).flatMap(\.registry.surveySamples)
        }
        #expect(samples.count >= 2 && samples.allSatisfy { $0.beacon == D.anaFob && $0.department == 20 }, "\(samples)")
    }

    @Test("a store taken over continues the registry's visit: no second greeting, and one `left` when the member goes")
    func warmTakeOver() throws {
        var state = Self.state()
        var seq: UInt64 = 0
        // Standing by while Ana is in the store (the other coordinator greeted her at start + 1 s and saved the visit).
        _ = Self.walk(&state, from: D.start, seconds: 5, seq: &seq, monotonic: Self.instant)
        let now = D.start + .seconds(5)
        let renewal = state.leasesRenewed(
            [1: .init(since: now, fenced: true)], sentAt: Self.instant(now), at: now, instant: Self.instant(now))
        #expect(renewal.takeOvers == [1])
        #expect(state.active.isEmpty, "not deciding before the store is loaded")
        let saved = PresenceEngine.Visit(
            member: "ana", store: 1, arrivedAt: D.start + .seconds(1), department: 10, inDepartmentSince: D.start + .seconds(1),
            lastSeen: D.start + .seconds(1), leftAt: nil, proximity: .immediate)
        let taken = state.tookOver(
            [1], loaded: .init(stores: [1], visits: [saved], promoFires: [:], handledCheckins: []), at: now,
            instant: Self.instant(now))
        #expect(taken.status?.active == [1])
        // Ana stays 3 s more, renewals every second, then goes.
        var actions: [CoordinatorActions] = []
        for second in 0..<3 {
            let at = now + .seconds(Int64(second))
            _ = state.leasesRenewed([1: .init(since: now, fenced: true)], sentAt: Self.instant(at), at: at, instant: Self.instant(at))
            actions += Self.walk(&state, from: at, seconds: 1, seq: &seq, monotonic: Self.instant)
        }
        for second in 3..<40 {
            let at = now + .seconds(Int64(second))
            _ = state.leasesRenewed([1: .init(since: now, fenced: true)], sentAt: Self.instant(at), at: at, instant: Self.instant(at))
            actions += Self.walk(&state, from: at, seconds: 1, seq: &seq, heard: false, monotonic: Self.instant)
        }
        let events = actions.flatMap(D.events)
        #expect(events.filter { $0.type == "arrived" }.isEmpty, "\(events.map(\.type))")
        #expect(events.filter { $0.type == "left" }.count == 1, "\(events.map(\.type))")
        #expect(events.allSatisfy { $0.id.hasPrefix("backoffice-2/") }, "the event id names the coordinator")
        #expect(actions.contains { !$0.snapshots.isEmpty }, "the store's snapshot is published by its new holder")
    }

    @Test("a holder whose renewals stop decides nothing for the store once ttl minus the margin has passed")
    func fencedWithoutRenewal() throws {
        var state = Self.state()
        let renewal = state.leasesRenewed([1: .init(since: D.start, fenced: true)], sentAt: Self.t0, at: D.start, instant: Self.t0)
        #expect(renewal.takeOvers == [1])
        _ = state.tookOver(
            [1], loaded: .init(stores: [1], visits: [], promoFires: [:], handledCheckins: []), at: D.start, instant: Self.t0)
        var seq: UInt64 = 0
        // The database goes away: no renewal. Ana comes at 3 s, when the fence (ttl 4 s − margin 1 s) has closed.
        let actions = Self.walk(&state, from: D.start + .seconds(3), seconds: 4, seq: &seq, monotonic: Self.instant)
        let events = actions.flatMap(D.events)
        #expect(events.filter { $0.type == "arrived" }.isEmpty, "\(events.map(\.type))")
        #expect(actions.compactMap(\.status).map(\.active) == [[]], "it says once that it stands by")
        #expect(actions.allSatisfy { $0.registry.counts.isEmpty })
    }

    @Test("a holder nobody stands by for goes on deciding without renewals, as a lone coordinator cut off always has")
    func aloneGoesOn() throws {
        var state = Self.state()
        _ = state.leasesRenewed([1: .init(since: D.start, fenced: false)], sentAt: Self.t0, at: D.start, instant: Self.t0)
        _ = state.tookOver(
            [1], loaded: .init(stores: [1], visits: [], promoFires: [:], handledCheckins: []), at: D.start, instant: Self.t0)
        var seq: UInt64 = 0
        let actions = Self.walk(&state, from: D.start + .seconds(60), seconds: 3, seq: &seq, monotonic: Self.instant)
        #expect(actions.flatMap(D.events).map(\.type) == ["node", "arrived"])
    }

    @Test("a paused holder (SIGSTOP) that resumes after its lease ran out publishes nothing before it checks")
    func pausedHolder() throws {
        var state = Self.state()
        _ = state.leasesRenewed([1: .init(since: D.start, fenced: true)], sentAt: Self.t0, at: D.start, instant: Self.t0)
        _ = state.tookOver(
            [1], loaded: .init(stores: [1], visits: [], promoFires: [:], handledCheckins: []), at: D.start, instant: Self.t0)
        var seq: UInt64 = 0
        let before = Self.walk(&state, from: D.start, seconds: 2, seq: &seq, monotonic: Self.instant)
        #expect(before.flatMap(D.events).map(\.type) == ["node", "arrived"])
        // Frozen for 20 s; on resuming, the first thing done is the lease check, then a stale renewal's answer.
        let resumed = D.start + .seconds(22)
        let fenced = state.checkLeases(at: Self.instant(resumed))
        #expect(fenced?.status?.active == [])
        let after = Self.walk(&state, from: resumed, seconds: 30, seq: &seq, heard: false, monotonic: Self.instant)
        #expect(after.flatMap(D.events).isEmpty, "no `left` from the paused coordinator")
        #expect(state.decidingUntil?.isEmpty == true)
    }

    @Test("a check-in request that came while nobody decided is handled by the new holder, once")
    func checkinDuringHandOver() throws {
        var state = Self.state()
        var seq: UInt64 = 0
        let cafe = NodeAddress(store: 1, department: 20, node: "a")!
        seq += 1
        _ = state.handle([D.batch(cafe, seq: seq, at: D.start)], at: D.start)
        let request = CheckinRequest(id: "r1", member: "ana", department: 20, till: "till-1", at: D.start)
        _ = state.handle([.checkin(request, store: 1)], at: D.start + .seconds(1))
        let now = D.start + .seconds(2)
        _ = state.leasesRenewed([1: .init(since: now, fenced: true)], sentAt: Self.instant(now), at: now, instant: Self.instant(now))
        seq += 1
        _ = state.handle([D.batch(cafe, seq: seq, at: now)], at: now)
        let taken = state.tookOver(
            [1], loaded: .init(stores: [1], visits: [], promoFires: [:], handledCheckins: []), at: now, instant: Self.instant(now))
        #expect(D.events(taken).map(\.type) == ["checkin"])
        let again = state.handle([.checkin(request, store: 1)], at: now + .seconds(1))
        #expect(D.events(again).isEmpty, "counted once")
    }
}
