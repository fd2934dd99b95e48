import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging
import ServiceLifecycle

/// The coordinator's two broker connections over its life: connected, subscribed to its stores and `online` before
/// anything else runs (`connect`); `online` said again after every reconnection (a lost session made the broker
/// publish the last will, `offline`); and at shutdown, the last thing the coordinator does, the publisher closed and
/// the session ended with the retained `offline` status. What either connection meets is logged as it comes
/// (`BrokerEventLog`).
struct BrokerSessionService: Service {
    let session: any MQTTClientProtocol
    let publisher: any MQTTClientProtocol
    /// The retained status as last published.
    let status: LatestStatus
    private let statusTopic: String
    private let offline: CoordinatorStatus
    private let events: AsyncStream<MQTTConnectionEvent>
    private let publisherEvents: AsyncStream<MQTTConnectionEvent>
    private let logger: Logger

    /// Starts both connections, subscribes to what `configuration`'s stores publish and says `status` (retained, on
    /// the session connection that holds the last will). A step that fails closes both connections and throws.
    static func connect(
        _ configuration: CoordinatorConfiguration, session: any MQTTClientProtocol, publisher: any MQTTClientProtocol,
        status: CoordinatorStatus, topics: Topics, logger: Logger
    ) async throws -> BrokerSessionService {
        let service = BrokerSessionService(
            session: session, publisher: publisher, status: LatestStatus(WireCodec.encode(status)),
            statusTopic: topics.coordinatorStatus(id: configuration.id),
            offline: CoordinatorStatus(state: .offline, stores: configuration.storeIDs, active: [], startedAt: status.startedAt),
            events: session.connectionEvents(), publisherEvents: publisher.connectionEvents(), logger: logger)
        do {
            try publisher.start()
            try session.start()
            for store in configuration.storeIDs {
                try session.subscribe(topics.allSightings(store: store), qos: .atLeastOnce)
                try session.subscribe(topics.allNodeStatus(store: store), qos: .atLeastOnce)
                try session.subscribe(topics.allRanging(store: store), qos: .atLeastOnce)
                try session.subscribe(topics.checkins(store: store), qos: .atLeastOnce)
                try session.subscribe(topics.survey(store: store), qos: .atLeastOnce)
            }
            // Should the broker still hold our previous session, taking it over publishes its will first; this after.
            try session.publish(topic: service.statusTopic, payload: service.status.payload, qos: .atLeastOnce, retain: true)
        } catch {
            await publisher.disconnect(timeout: .seconds(1))
            await session.disconnect(timeout: .seconds(1), finalMessage: nil)
            throw error
        }
        return service
    }

    func run() async {
        async let publisherEventsLogged: Void = BrokerEventLog.follow(publisherEvents, logger: logger)
        await cancelWhenGracefulShutdown {
            var connections = 0
            for await event in events {
                BrokerEventLog.log(event, to: logger)
                guard case .connected = event else { continue }
                connections += 1
                guard connections > 1 else { continue }
                logger.notice("reconnected to the broker; status online again")
                do {
                    try session.publish(topic: statusTopic, payload: status.payload, qos: .atLeastOnce, retain: true)
                } catch {
                    logger.warning("could not publish", metadata: ["topic": "\(statusTopic)", "error": "\(error)"])
                }
            }
        }
        var troubles = await publisher.disconnect(timeout: .seconds(5))
        await publisherEventsLogged
        troubles += await session.disconnect(
            timeout: .seconds(5),
            finalMessage: MQTTMessage(topic: statusTopic, payload: WireCodec.encode(offline), qos: .atLeastOnce, retained: true))
        for trouble in troubles { BrokerEventLog.log(trouble, to: logger) }
    }
}
