import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Logging
import ServiceLifecycle

/// The coordinator's webhooks: the routes from publications to deliveries (written by the registry writer), a courier
/// per endpoint to deliver them, and the stores they deliver for (those this coordinator decides). Made before the
/// coordinator runs (an endpoint's `cafile` is read then); nothing is started until `run()`, which makes the one
/// client the couriers POST through.
struct Webhooks: Service {
    let routes: WebhookRoutes
    let couriers: [WebhookCourier]
    let stores: DeliveringStores

    /// The config's webhooks, delivering for the stores in `active` to begin with; `nil` without `webhooks:`. Throws
    /// when an endpoint's `cafile` cannot be read.
    init?(
        _ configuration: CoordinatorConfiguration, outbox: any WebhookOutbox, active: [UInt16], topics: Topics, logger: Logger,
        clock: any ServiceClock
    ) throws {
        guard !configuration.webhooks.isEmpty else { return nil }
        let stores = DeliveringStores(Set(active))
        self.couriers = try configuration.webhooks.map { endpoint in
            try WebhookCourier(endpoint: endpoint, outbox: outbox, stores: stores, logger: logger, clock: clock)
        }
        self.stores = stores
        self.routes = WebhookRoutes(endpoints: configuration.webhooks, topics: topics)
    }

    /// New deliveries are in the outbox.
    func wake() {
        for courier in couriers { courier.wake() }
    }

    /// Delivers until shutdown (a POST under way is abandoned: sent again at the next start).
    func run() async {
        let client = WebhookClient(urgency: .whenIdle)
        await cancelWhenGracefulShutdown { [couriers] in
            await withDiscardingTaskGroup { group in
                for courier in couriers { group.addTask { await courier.run(through: client) } }
            }
        }
        await client.shutdown()
    }
}
