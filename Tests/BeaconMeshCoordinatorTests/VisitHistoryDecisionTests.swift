import BeaconMeshCore
import BeaconMeshRegistry
import Foundation
import Testing

@testable import BeaconMeshCoordinator

/// What the decisions hand the registry writer for the history, with time passed in (a manual clock): no broker,
/// no database.
@Suite("Visit history decisions")
struct VisitHistoryDecisionTests {
    typealias Decisions = CoordinatorDecisionTests

    /// Ticks every 500 ms from `from` for `seconds`, hearing nobody; every action returned.
    static func wait(_ state: inout CoordinatorState, from: Timestamp, seconds: Int) -> [CoordinatorActions] {
        (0..<(seconds * 2)).map { state.tick(at: from + .milliseconds(Int64($0) * 500)) }
    }

    /// The history records among `actions`, in order.
    static func records(_ actions: [CoordinatorActions]) -> [VisitRecord] { actions.flatMap { $0.registry.history.values } }

    @Test("a finished visit is handed to the history with its departments in order, their dwell, and its number")
    func finishedVisit() throws {
        var state = Decisions.state()
        var seq: UInt64 = 0
        var actions = Decisions.walk(&state, in: Decisions.clothing, from: Decisions.start, seconds: 4, seq: &seq)
        actions += Decisions.walk(&state, in: Decisions.cafe, from: Decisions.start + .seconds(4), seconds: 10, seq: &seq)
        actions += Self.wait(&state, from: Decisions.start + .seconds(14), seconds: 40)
        let history = Self.records(actions)
        let open = try #require(history.first)
        #expect(open.leftAt == nil && open.stops.map(\.department) == [10] && open.number == 5)
        let last = try #require(history.last)
        #expect(Set(history.map(\.key)) == [last.key], "every write is of the same visit")
        #expect(last.stops.map(\.department) == [10, 20])
        #expect(last.stops.map(\.name) == ["Clothing", "Café"])
        let leftAt = try #require(last.leftAt)
        // Heard until 13.5 s after the start: the visit ends at its last reading.
        #expect(abs((leftAt - Decisions.start).wholeMilliseconds - 13_500) <= 500)
        let total = last.stops.reduce(Duration.zero) { $0 + $1.dwell }
        #expect(total == leftAt - last.arrivedAt, "the stops' dwell adds up to the visit")
        #expect(last.stops[1].enteredAt == last.stops[0].enteredAt + last.stops[0].dwell)
    }

    @Test("history older than retention.visits is deleted at the first tick and then every hour, not more often")
    func retentionHourly() throws {
        var state = Decisions.state()
        let first = state.tick(at: Decisions.start)
        #expect(first.registry.forgetHistoryBefore == Decisions.start - .seconds(365 * 24 * 3600))
        let soon = Self.wait(&state, from: Decisions.start + .seconds(1), seconds: 60)
        #expect(soon.allSatisfy { $0.registry.forgetHistoryBefore == nil })
        let hourLater = state.tick(at: Decisions.start + .seconds(3600))
        #expect(hourLater.registry.forgetHistoryBefore == Decisions.start + .seconds(3600) - .seconds(365 * 24 * 3600))
    }

    @Test("a visit going on at a restart is finished under the same key, keeping the departments written before it")
    func restartFinishesSameVisit() throws {
        var state = Decisions.state()
        var seq: UInt64 = 0
        var before = Decisions.walk(&state, in: Decisions.clothing, from: Decisions.start, seconds: 4, seq: &seq)
        before += Decisions.walk(&state, in: Decisions.cafe, from: Decisions.start + .seconds(4), seconds: 10, seq: &seq)
        before += [state.saveVisits()]
        let written = try #require(Self.records(before).last)
        #expect(written.leftAt == nil && written.stops.map(\.department) == [10, 20])
        let saved = try #require(before.compactMap { $0.registry.visits["ana"] ?? nil }.last)

        // A new process: the same registry contents, the open visit and its history read back.
        var restarted = Self.restarted(visits: [saved], history: [written], at: Decisions.start + .seconds(15))
        let after = Self.wait(&restarted, from: Decisions.start + .seconds(15), seconds: 40)
        let finished = try #require(Self.records(after).last)
        #expect(finished.key == written.key)
        #expect(finished.leftAt != nil)
        #expect(finished.stops.map(\.department) == [10, 20])
        #expect(finished.stops.first?.dwell == written.stops.first?.dwell)
    }

    @Test("a guest's stay is counted per store, hour and department when it ends, never with its beacon")
    func guestCounted() throws {
        var state = Decisions.state()
        let guest = BeaconKey.iBeacon(uuid: Decisions.uuid, major: 7, minor: 7)
        var actions: [CoordinatorActions] = []
        for step in 0..<10 {
            let now = Decisions.start + .milliseconds(Int64(step) * 500)
            let sighting = Sighting(beacon: guest, rssi: -60, count: 1, txPower: -59, distance: 2, proximity: .near, lastSeen: now)
            actions.append(
                state.handle(
                    [
                        .sightings(
                            SightingBatch(node: Decisions.clothing, boot: "g", seq: UInt64(step + 1), sentAt: now, sightings: [sighting]))
                    ],
                    at: now))
            actions.append(state.tick(at: now))
        }
        actions += Self.wait(&state, from: Decisions.start + .seconds(5), seconds: 40)
        let counts = actions.flatMap { $0.registry.guestCounts }
        #expect(counts.count == 1)
        let (key, count) = try #require(counts.first)
        #expect(key.store == 1 && key.department == 10)
        #expect(key.hour.milliseconds == Decisions.start.milliseconds - Decisions.start.milliseconds % 3_600_000)
        #expect(count.visits == 1)
        #expect(abs(count.dwell.wholeMilliseconds - 4500) <= 500)
        #expect(Self.records(actions).isEmpty, "a guest has no member history")
    }

    @Test("a check-in at the till during the visit is kept with the visit, with its department and time")
    func checkinKept() throws {
        var state = Decisions.state()
        var seq: UInt64 = 0
        var actions = Decisions.walk(&state, in: Decisions.cafe, from: Decisions.start, seconds: 4, seq: &seq)
        let at = Decisions.start + .seconds(4)
        actions.append(
            state.handle([.checkin(CheckinRequest(id: "till-1", member: "ana", department: 20, till: "counter", at: at), store: 1)], at: at)
        )
        // Delivered again: counted once, kept once.
        actions.append(
            state.handle([.checkin(CheckinRequest(id: "till-1", member: "ana", department: 20, till: "counter", at: at), store: 1)], at: at)
        )
        actions += Self.wait(&state, from: at, seconds: 40)
        let last = try #require(Self.records(actions).last)
        #expect(last.leftAt != nil)
        #expect(last.checkins == [.init(department: 20, at: at)])
    }

    /// A state started as a restarted coordinator would be: Ana's profile with the visit counted, `visits` and
    /// `history` read back from the registry.
    static func restarted(visits: [PresenceEngine.Visit], history: [VisitRecord], at time: Timestamp) -> CoordinatorState {
        let fresh = Decisions.state()
        let ana = MemberProfile(id: "ana", name: "Ana", favoriteDrink: "flat white", visits: 5)
        let contents = RegistryContents(profiles: ["ana": ana], beaconOwners: [Decisions.anaFob: "ana"], promoFires: [:])
        return CoordinatorState(
            configuration: fresh.configuration, start: .init(contents: contents, visits: visits, handledCheckins: [], history: history),
            logger: fresh.logger, topics: fresh.topics, startedAt: time, healthInterval: .seconds(30), eventPrefix: "r")
    }
}
