import BeaconMeshCore
import BeaconMeshRegistry
import BeaconMeshWire

/// Which webhook endpoints are owed what the coordinator publishes, and as what body: the contract's JSON of each
/// event or alert of the types an endpoint asks for, a member reduced to `{"id":"…"}` unless it asked for personal
/// data. The deliveries go to the registry writer with the decisions' other changes (off the path to the MQTT event).
struct WebhookRoutes: Sendable {
    let endpoints: [WebhookEndpoint]
    let topics: Topics

    /// The deliveries owed for `publications` (in their order, each endpoint's in order).
    func deliveries(for publications: [Publication], at time: Timestamp) -> [WebhookDelivery] {
        var deliveries: [WebhookDelivery] = []
        for publication in publications {
            switch publication.message {
            case .event(let event):
                // A check-in is also sent to the member's own topic: one delivery, for the store's events topic.
                guard publication.topic == topics.events(store: event.store),
                    let type = WebhookEndpoint.EventType(rawValue: event.type)
                else { continue }
                for endpoint in endpoints where endpoint.events.contains(type) {
                    deliveries.append(
                        WebhookDelivery(
                            endpoint: endpoint.name, store: event.store, eventID: event.id,
                            body: WireCodec.encode(event, members: endpoint.personalData ? .full : .idOnly),
                            personalDataOf: endpoint.personalData ? event.member?.id : nil, createdAt: time))
                }
            case .alert(let alert):
                for endpoint in endpoints where endpoint.events.contains(.alert) {
                    deliveries.append(
                        WebhookDelivery(
                            endpoint: endpoint.name, store: alert.store, eventID: alert.id,
                            body: WireCodec.encode(alert, members: endpoint.personalData ? .full : .idOnly),
                            personalDataOf: endpoint.personalData ? alert.member?.id : nil, createdAt: time))
                }
            case .offer, .snapshot, .health, .encoded:
                continue
            }
        }
        return deliveries
    }

    /// The deliveries owed for a registry event (ids only, never personal data), delivered by `store`'s holder.
    func deliveries(for event: RegistryEvent, store: UInt16, at time: Timestamp) -> [WebhookDelivery] {
        guard let type = WebhookEndpoint.EventType(rawValue: event.kind.rawValue) else { return [] }
        return endpoints.filter { $0.events.contains(type) }.map { endpoint in
            WebhookDelivery(endpoint: endpoint.name, store: store, eventID: event.id, body: WireCodec.encode(event), createdAt: time)
        }
    }
}
