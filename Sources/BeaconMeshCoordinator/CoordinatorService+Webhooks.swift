import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshService
import Logging

extension CoordinatorService {
    /// Starts a courier per configured webhook endpoint, delivering for the stores in `active` (then those the
    /// status says this coordinator decides); `nil` without `webhooks:`.
    static func startWebhooks(
        _ configuration: CoordinatorConfiguration, outbox: any WebhookOutbox, active: [UInt16], topics: Topics, logger: Logger,
        clock: any ServiceClock
    ) throws -> Webhooks? {
        guard !configuration.webhooks.isEmpty else { return nil }
        let stores = DeliveringStores(Set(active))
        var couriers: [WebhookCourier] = []
        for endpoint in configuration.webhooks {
            let courier = WebhookCourier(
                endpoint: endpoint, outbox: outbox, client: try WebhookClient(endpoint: endpoint, urgency: .whenIdle), stores: stores,
                logger: logger,
                clock: { clock.now() })
            try courier.start()
            couriers.append(courier)
        }
        logger.info(
            "webhooks delivering",
            metadata: ["endpoints": "\(configuration.webhooks.map { "\($0.name) \($0.url)" }.joined(separator: ", "))"])
        return Webhooks(routes: WebhookRoutes(endpoints: configuration.webhooks, topics: topics), couriers: couriers, stores: stores)
    }
}
