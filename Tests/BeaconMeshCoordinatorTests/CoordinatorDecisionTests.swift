import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshRegistry
import BeaconMeshWire
import Logging
import Synchronization
import Testing

@testable import BeaconMeshCoordinator

/// The coordinator's decisions without a broker, a database or a clock: inputs and time in, actions out.
@Suite("Coordinator decisions")
struct CoordinatorDecisionTests {
    static let uuid = BeaconUUID("0cf052c2-97ca-407c-84f8-b62aac4e9020")!
    static let anaFob = BeaconKey.iBeacon(uuid: uuid, major: 1, minor: 1)
    static let start = Timestamp(milliseconds: 1_763_769_600_000)
    static let clothing = NodeAddress(store: 1, department: 10, node: "a")!
    static let cafe = NodeAddress(store: 1, department: 20, node: "a")!

    static func state() -> CoordinatorState {
        var configuration = CoordinatorConfiguration(id: "test")
        var store = CoordinatorConfiguration.Store(id: 1, name: "High Street")
        store.departments = [
            .init(id: 10, name: "Clothing", presence: PresenceRules()),
            .init(id: 20, name: "Café", presence: PresenceRules(), till: true),
        ]
        configuration.stores = [store]
        var logger = Logger(label: "test.decisions")
        logger.logLevel = .critical
        let ana = MemberProfile(id: "ana", name: "Ana", favoriteDrink: "flat white", visits: 4)
        let contents = RegistryContents(profiles: ["ana": ana], beaconOwners: [anaFob: "ana"], promoFires: [:])
        return CoordinatorState(
            configuration: configuration, start: .init(contents: contents, visits: [], handledCheckins: ["old-request"]),
            logger: logger, topics: Topics(), startedAt: start, healthInterval: .seconds(30), eventPrefix: "t")
    }

    static func batch(_ node: NodeAddress, seq: UInt64, at time: Timestamp, rssi: Double = -55) -> CoordinatorInput {
        let sighting = Sighting(beacon: anaFob, rssi: rssi, count: 3, txPower: -59, distance: 0.8, proximity: .immediate, lastSeen: time)
        return .sightings(SightingBatch(node: node, boot: "b", seq: seq, sentAt: time, sightings: [sighting]))
    }

    /// The store events among `actions`' publications, as the decisions made them (the wire tests pin their bytes).
    static func events(_ actions: CoordinatorActions) -> [StoreEvent] {
        actions.publications.filter { $0.topic == Topics().events(store: 1) }.compactMap { publication in
            if case .event(let event) = publication.message { event } else { nil }
        }
    }

    /// Ana heard in Clothing every 500 ms from `from` for `seconds`, ticking every 50 ms; every action returned.
    static func walk(_ state: inout CoordinatorState, in node: NodeAddress, from: Timestamp, seconds: Int, seq: inout UInt64)
        -> [CoordinatorActions]
    {
        var all: [CoordinatorActions] = []
        for step in 0..<(seconds * 20) {
            let now = from + .milliseconds(Int64(step) * 50)
            if step % 10 == 0 {
                seq += 1
                all.append(state.handle([batch(node, seq: seq, at: now)], at: now))
            }
            all.append(state.tick(at: now))
        }
        return all
    }

    @Test("a member heard in a department is greeted once, with one more visit counted for the registry (an increment)")
    func arrival() throws {
        var state = Self.state()
        var seq: UInt64 = 0
        let actions = Self.walk(&state, in: Self.clothing, from: Self.start, seconds: 4, seq: &seq)
        let events = actions.flatMap(Self.events)
        // The node is new: it is announced online, then Ana arrives.
        #expect(events.map(\.type) == ["node", "arrived"])
        #expect(events.last?.member?.name == "Ana")
        #expect(events.map(\.id) == ["t-1", "t-2"])
        let counted = actions.compactMap { $0.registry.counts["ana"] }
        #expect(counted.map(\.visits) == [1])
        #expect(actions.contains { $0.registry.visits["ana"] != nil }, "the open visit is saved")
    }

    @Test("a refused message changes nothing but the drop count in the next health report")
    func refusedMessage() throws {
        var state = Self.state()
        let garbage = MQTTMessage(topic: Topics().sightings(Self.clothing), payload: Array("{not json".utf8), qos: .atLeastOnce)
        let mismatched = MQTTMessage(
            topic: Topics().sightings(Self.cafe),
            payload: WireCodec.encode(
                SightingBatch(node: Self.clothing, boot: "b", seq: 1, sentAt: Self.start, sightings: [])), qos: .atLeastOnce)
        let inputs = [garbage, mismatched].map { CoordinatorInput.decode($0, topics: Topics()) }
        let actions = state.handle(inputs, at: Self.start)
        #expect(actions.isEmpty)
        let health = try #require(state.tick(at: Self.start + .seconds(30)).health)
        #expect(health.dropped["topic-mismatch"] == 1)
        #expect(health.dropped.values.reduce(0, +) == 2)
        #expect(health.batches == 0)
    }

    @Test("a check-in near the till is counted once per request id; far from it, it is refused")
    func checkins() throws {
        var state = Self.state()
        var seq: UInt64 = 0
        let heard = Self.walk(&state, in: Self.cafe, from: Self.start, seconds: 2, seq: &seq)
        #expect(heard.flatMap(Self.events).map(\.type) == ["node", "arrived"])
        let now = Self.start + .seconds(2)
        let request = CheckinRequest(id: "r1", member: "ana", department: 20, till: "till-1", at: now)
        let first = state.handle([.checkin(request, store: 1), .checkin(request, store: 1)], at: now)
        let events = Self.events(first)
        #expect(events.map(\.type) == ["checkin"])
        #expect(first.registry.checkins["ana"] == 1)
        #expect(first.publications.contains { $0.topic == Topics().checkins(member: "ana") })
        // Trusted truth: her readings at that moment, as a check-in sample of the till department.
        let samples = first.registry.surveySamples
        #expect(samples.count == 1)
        #expect(samples.first?.source == .checkin && samples.first?.department == 20 && samples.first?.beacon == Self.anaFob)
        #expect(samples.first?.readings.isEmpty == false)
        // A request handled before the restart counts nothing.
        let old = CheckinRequest(id: "old-request", member: "ana", department: 20, till: "till-1", at: now)
        #expect(state.handle([.checkin(old, store: 1)], at: now).isEmpty)
        // Clothing is not a till.
        let wrong = CheckinRequest(id: "r2", member: "ana", department: 10, till: "till-1", at: now)
        let refusal = state.handle([.checkin(wrong, store: 1)], at: now)
        #expect(Self.events(refusal).map(\.type) == ["checkin-refused"])
        #expect(refusal.registry.surveySamples.isEmpty, "a refused check-in is no truth")
        // Ten seconds later, nobody has heard her near the till.
        let late = CheckinRequest(id: "r3", member: "ana", department: 20, till: "till-1", at: now + .seconds(10))
        let tooLate = Self.events(state.handle([.checkin(late, store: 1)], at: now + .seconds(10)))
        guard case .checkinRefused(_, _, _, let reason)? = tooLate.first?.kind else {
            Issue.record("expected a refusal, got \(tooLate)")
            return
        }
        #expect(reason == .notNearTill)
    }

    @Test("the decoding side hands chunks decoded on several workers to the decisions in arrival order")
    func decodingKeepsOrder() async throws {
        let messages = (1...2_000).map { seq in
            let node = NodeAddress(store: UInt16(seq % 7 + 1), department: 10, node: "n\(seq % 3)")!
            let batch = SightingBatch(node: node, boot: "b", seq: UInt64(seq), sentAt: Self.start, sightings: [])
            return MQTTMessage(topic: Topics().sightings(node), payload: WireCodec.encode(batch), qos: .atLeastOnce)
        }
        let source = ScriptedChunks(messages)
        let inbox = DecisionInbox(capacity: 2)
        async let decoded: Void = CoordinatorService.decode(source, topics: Topics(), workers: 4, into: inbox)
        var order: [UInt64] = []
        while order.count < messages.count, case .inputs(let inputs)? = await inbox.next() {
            for input in inputs {
                guard case .sightings(let batch) = input else {
                    Issue.record("not a batch: \(input)")
                    continue
                }
                order.append(batch.seq)
            }
        }
        await decoded
        #expect(order == Array(1...2_000))
        #expect(source.chunksTaken > 1, "the messages were taken a chunk at a time")
    }
}

/// Messages handed out in chunks of varying size, then the end.
final class ScriptedChunks: MessageChunks {
    private let state: Mutex<(messages: [MQTTMessage], next: Int, chunks: Int)>

    init(_ messages: [MQTTMessage]) { state = Mutex((messages, 0, 0)) }

    var chunksTaken: Int { state.withLock { $0.chunks } }

    func waiting(upTo limit: Int) -> [MQTTMessage] {
        state.withLock { state in
            // Every third call finds nothing waiting, as when the network is slower than the decoding.
            state.chunks += 1
            guard state.chunks % 3 != 0 else { return [] }
            let end = min(state.messages.count, state.next + min(limit, state.chunks % 50 + 1))
            defer { state.next = end }
            return Array(state.messages[state.next..<end])
        }
    }

    func next(upTo limit: Int) async -> [MQTTMessage]? {
        let (chunk, ended) = state.withLock { state -> ([MQTTMessage], Bool) in
            let end = min(state.messages.count, state.next + limit)
            defer { state.next = end }
            return (Array(state.messages[state.next..<end]), state.next == state.messages.count)
        }
        return ended ? nil : chunk
    }
}
