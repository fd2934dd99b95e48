import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshService
import BeaconMeshWire
import Logging
import ServiceLifecycle

/// The dashboard's read-only side of the broker: subscribes to the stores' presence snapshots, events, node status
/// and node health and to the coordinators' status, and feeds every message and connection change into the hub.
///
/// It publishes nothing. Every `heartbeat` it wakes the live pages, so they show fresh times, and a page whose
/// browser went away is noticed. On graceful shutdown it closes the hub (ending the live pages' streams, so the
/// HTTP server can finish), then disconnects: run it after the server in a `ServiceGroup`, so it is shut down first.
public final class DashboardFeed: Service {
    /// How often the live pages are woken when nothing changes; pages call their data stale after about two missed.
    public static let heartbeat: Duration = .seconds(5)

    private let client: any MQTTClientProtocol
    private let clock: any ServiceClock
    private let hub: DashboardHub
    private let filters: [String]
    private let logger: Logger

    /// A feed for `stores` (every store when empty) under `topicRoot`, through `client` (`MQTTClient`, or an in-memory
    /// one in tests), reading the time and waiting for heartbeats on `clock`.
    public init(
        client: any MQTTClientProtocol, hub: DashboardHub, stores: [UInt16], topicRoot: String = Topics.defaultRoot,
        clock: any ServiceClock = WallClock(), logger: Logger
    ) {
        self.client = client
        self.clock = clock
        self.hub = hub
        self.filters = Self.filters(stores: stores, topics: Topics(root: topicRoot))
        self.logger = logger
    }

    /// The subscriptions: each store's snapshot, events, alerts, node status and node health (`+` for every store),
    /// and every coordinator's status and health.
    public static func filters(stores: [UInt16], topics: Topics) -> [String] {
        let storeLevels: [UInt16?] = stores.isEmpty ? [nil] : stores
        var filters: [String] = []
        for store in storeLevels {
            filters.append(topics.presenceFilter(store: store))
            filters.append(topics.eventsFilter(store: store))
            filters.append(topics.alertsFilter(store: store))
            filters.append(topics.nodeStatusFilter(store: store))
            filters.append(topics.nodeHealthFilter(store: store))
        }
        filters.append(topics.coordinatorStatusFilter(id: nil))
        // Their health, for the webhook endpoints that fail (shown on the overview).
        filters.append(topics.coordinatorHealthFilter(id: nil))
        return filters
    }

    public func run() async throws {
        let connectionEvents = client.connectionEvents()  // before start(), so the first connection is not missed
        do {
            try client.start()
            for filter in filters { try client.subscribe(filter, qos: .atLeastOnce) }
        } catch {
            hub.close()
            await client.disconnect(timeout: .seconds(1))
            throw error
        }
        let messages = client.messages
        let client = self.client
        let hub = self.hub
        let clock = self.clock
        let logger = self.logger
        // Shutdown cancels the reading (the messages end when their reader is cancelled); then the hub closes its
        // streams and the client disconnects.
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await event in connectionEvents {
                        BrokerEventLog.log(event, to: logger)
                        switch event {
                        case .connected:
                            hub.connection(changed: true, at: clock.now())
                        case .disconnected(let reason):
                            if reason != .requested { hub.connection(changed: false, at: clock.now()) }
                        case .trouble:
                            break
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await clock.sleep(for: Self.heartbeat)
                        hub.heartbeat()
                    }
                }
                if client.isConnected { hub.connection(changed: true, at: clock.now()) }
                var drops = DropCounter()
                for await message in messages {
                    let now = clock.now()
                    if let error = hub.receive(topic: message.topic, payload: message.payload, at: now) {
                        drops.drop(reason: error.reason, topic: message.topic, detail: error.description, at: now, logger: logger)
                    }
                }
                group.cancelAll()
            }
        }
        hub.close()
        for trouble in await client.disconnect(timeout: .seconds(2)) { BrokerEventLog.log(trouble, to: logger) }
    }
}
