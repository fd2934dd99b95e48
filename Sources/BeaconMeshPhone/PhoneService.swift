import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging
import ServiceLifecycle

/// A member's phone app, simulated: walks the store's route publishing a ranging report about once a second on
/// `stores/{store}/members/{member}/ranging`, and turns every message on its own `members/{member}/offers` and
/// `members/{member}/checkins` into one line (`write`), or one warning line (`warn`) for a payload it cannot read.
///
/// Reports carry one `session` per start and `seq` from 1; `sentAt` is the phone's own clock (`clockOffset` off).
/// When the phone leaves the store (after the route, or at shutdown) it sends one report with an empty list, then
/// nothing until it ranges the store again. Reports the broker has not taken are not piled up: beyond
/// `maximumUnacknowledged` a report is skipped, since a late reading is worth nothing.
public final class PhoneService: Service {
    private let configuration: PhoneConfiguration
    private let client: any MQTTClientProtocol
    private let session: String
    private let logger: Logger
    private let topics: Topics
    private let clock: any ServiceClock
    private let write: @Sendable (String) -> Void
    private let warn: @Sendable (String) -> Void

    /// How many reports may wait for the broker before new ones are skipped (a minute's worth).
    static let maximumUnacknowledged = 60

    /// A phone of `configuration.member` with the given `session` id, through `client` (`MQTTClient`, or an
    /// in-memory one in tests); `clock` is the real time and paces the reports (the phone's own clock, in `sentAt`, is
    /// `clock.now() + configuration.clockOffset`).
    public init(
        configuration: PhoneConfiguration, client: any MQTTClientProtocol, session: String, logger: Logger,
        clock: any ServiceClock = WallClock(),
        write: @escaping @Sendable (String) -> Void, warn: @escaping @Sendable (String) -> Void
    ) {
        self.configuration = configuration
        self.client = client
        self.session = session
        self.logger = logger
        self.topics = Topics(root: configuration.topicRoot)
        self.clock = clock
        self.write = write
        self.warn = warn
    }

    /// The client configuration a phone uses: a client id of its own per session, a clean session, no will.
    public static func mqttConfiguration(for configuration: PhoneConfiguration, session: String) throws(BrokerConnection.Failure)
        -> MQTTConfiguration
    {
        try configuration.broker.mqttConfiguration(
            clientID: "beaconmesh-phone-\(configuration.member)-\(session)",
            cleanSession: true, lastWill: nil)
    }

    public func run() async throws {
        let offers = topics.offers(member: configuration.member)
        let checkins = topics.checkins(member: configuration.member)
        let connectionEvents = client.connectionEvents()  // before start(), so the first connection is not missed
        try client.start()
        async let brokerEventsLogged: Void = BrokerEventLog.follow(connectionEvents, logger: logger)
        try client.subscribe(offers, qos: .atLeastOnce)
        try client.subscribe(checkins, qos: .atLeastOnce)
        logger.info(
            "phone running",
            metadata: [
                "member": "\(configuration.member)", "store": "\(configuration.store)", "session": "\(session)",
                "route": "\(configuration.walk.route.map(String.init).joined(separator: ","))",
                "broker": "\(configuration.broker.url)",
            ])

        let messages = client.messages
        let reports = await withDiscardingTaskGroup(returning: UInt64.self) { group in
            group.addTask { [write, warn] in
                // What the store sends the member, until the client is disconnected below.
                for await message in messages {
                    do throws(WireError) {
                        switch message.topic {
                        case offers: write(try PhoneMessageLine.offer(message.payload))
                        case checkins: write(try PhoneMessageLine.checkin(message.payload))
                        default: warn("ignored a message on \(message.topic): not one of this phone's topics")
                        }
                    } catch {
                        warn("ignored a message on \(message.topic): \(error.description)")
                    }
                }
            }
            // The walk, until shutdown (graceful or cancelled).
            var state = await cancelWhenGracefulShutdown { await self.walk() }
            // The app stops ranging: say so, so the store stops counting its readings at once.
            if state.lastWasInStore { publish(beacons: [], state: &state) }
            for trouble in await client.disconnect(timeout: .seconds(3)) { BrokerEventLog.log(trouble, to: logger) }
            return state.seq
        }
        await brokerEventsLogged
        logger.info("phone stopped", metadata: ["reports": "\(reports)"])
    }

    /// What the walk has sent so far.
    struct WalkState {
        var seq: UInt64 = 0
        /// Whether the last report sent listed beacons (the phone was in the store).
        var lastWasInStore = false
        var lastStep: Int?
        var skipped = 0
    }

    /// Publishes a report every `reportInterval` while the phone is in the store, one empty report when it leaves;
    /// returns when cancelled.
    private func walk() async -> WalkState {
        var state = WalkState()
        var random = SystemRandomNumberGenerator()
        let start = clock.now()
        var tick: Int64 = 0
        while !Task.isCancelled {
            let elapsed = clock.now() - start
            let step = configuration.walk.step(at: elapsed)
            if step != state.lastStep {
                logger.info(
                    "walking",
                    metadata: [
                        "department": "\(step.map { "\(configuration.walk.route[$0])" } ?? "out of the store")"
                    ])
            }
            state.lastStep = step
            if step != nil {
                publish(beacons: configuration.walk.beacons(at: elapsed, using: &random), state: &state)
            } else if state.lastWasInStore {
                publish(beacons: [], state: &state)
            }
            tick += 1
            // Until the next report is due on the clock (never drifting: the due times are counted from the start).
            try? await clock.sleep(for: (start + configuration.reportInterval * tick) - clock.now())
        }
        return state
    }

    private func publish(beacons: [RangingReport.RangedBeacon], state: inout WalkState) {
        if client.unacknowledgedCount >= Self.maximumUnacknowledged {
            state.skipped += 1
            if state.skipped == 1 || state.skipped % 60 == 0 {
                logger.warning("the broker is not taking reports; skipping them", metadata: ["skipped": "\(state.skipped)"])
            }
            return
        }
        state.seq += 1
        let report = RangingReport(
            member: configuration.member, session: session, seq: state.seq,
            sentAt: clock.now() + configuration.clockOffset, beacons: beacons)
        do {
            try client.publish(
                topic: topics.ranging(store: configuration.store, member: configuration.member),
                payload: WireCodec.encode(report), qos: .atLeastOnce, retain: false)
            state.lastWasInStore = !beacons.isEmpty
        } catch {
            logger.warning("could not publish a ranging report", metadata: ["error": "\(error)"])
        }
    }
}
