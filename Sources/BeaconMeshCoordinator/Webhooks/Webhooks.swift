import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Logging
import ServiceLifecycle

/// The coordinator's webhooks: the routes from publications to deliveries (written by the registry writer), a courier
/// per endpoint to deliver them, the one client they POST through, and the stores they deliver for (those this
/// coordinator decides). `run()` delivers until cancelled, then closes the client.
struct Webhooks: Service {
    let routes: WebhookRoutes
    let couriers: [WebhookCourier]
    let stores: DeliveringStores
    private let client: WebhookClient

    /// The config's webhooks, delivering for the stores in `active` to begin with; `nil` without `webhooks:`. Throws
    /// when an endpoint's `cafile` cannot be read.
    init?(
        _ configuration: CoordinatorConfiguration, outbox: any WebhookOutbox, active: [UInt16], topics: Topics, logger: Logger,
        clock: any ServiceClock
    ) throws {
        guard !configuration.webhooks.isEmpty else { return nil }
        let stores = DeliveringStores(Set(active))
        let client = WebhookClient(urgency: .whenIdle)
        self.couriers = try configuration.webhooks.map { endpoint in
            try WebhookCourier(endpoint: endpoint, outbox: outbox, client: client, stores: stores, logger: logger, clock: clock)
        }
        self.client = client
        self.stores = stores
        self.routes = WebhookRoutes(endpoints: configuration.webhooks, topics: topics)
    }

    /// New deliveries are in the outbox.
    func wake() {
        for courier in couriers { courier.wake() }
    }

    func run() async {
        await withDiscardingTaskGroup { group in
            for courier in couriers { group.addTask { await courier.run() } }
        }
        await client.shutdown()
    }
}
