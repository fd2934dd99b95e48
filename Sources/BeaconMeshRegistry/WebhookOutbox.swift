import BeaconMeshCore

/// One POST a webhook endpoint is owed: an event or alert as that endpoint is to receive it, waiting in the registry's
/// outbox until the endpoint took it (any 2xx), refused it for good (a 4xx other than 408 and 429), or 24 hours of
/// retries went by.
public struct WebhookDelivery: Sendable, Hashable {
    /// Its number in the outbox (the order it is delivered in); 0 until written.
    public var seq: Int64
    /// The config's name of the endpoint.
    public var endpoint: String
    /// The store whose lease holder delivers it.
    public var store: UInt16
    /// The payload's id: the `BeaconMesh-Event-Id` header, by which a receiver drops a duplicate.
    public var eventID: String
    /// The JSON body, as the endpoint is to receive it (a member reduced to their id unless it asked for more).
    public var body: [UInt8]
    /// The member whose personal data the body carries, if any: erased with them (`forget`).
    public var personalDataOf: String?
    public var createdAt: Timestamp

    public init(
        seq: Int64 = 0, endpoint: String, store: UInt16, eventID: String, body: [UInt8], personalDataOf: String? = nil,
        createdAt: Timestamp
    ) {
        self.seq = seq
        self.endpoint = endpoint
        self.store = store
        self.eventID = eventID
        self.body = body
        self.personalDataOf = personalDataOf
        self.createdAt = createdAt
    }
}

/// The webhook outbox as a coordinator's couriers read it: deliveries are added by the `RegistryWriter`
/// (`RegistryChanges.queueWebhook`), off the path to the MQTT event, and removed here once done with.
public protocol WebhookOutbox: RegistryBackend {
    /// The oldest `limit` deliveries owed to `endpoint` for `stores`, in outbox order.
    func pendingWebhookDeliveries(endpoint: String, stores: Set<UInt16>, limit: Int) throws -> [WebhookDelivery]

    /// Removes deliveries done with (delivered, refused or expired).
    func removeWebhookDeliveries(_ seqs: [Int64]) throws

    /// How many deliveries are owed to `endpoint` for `stores`.
    func webhookBacklog(endpoint: String, stores: Set<UInt16>) throws -> Int
}
