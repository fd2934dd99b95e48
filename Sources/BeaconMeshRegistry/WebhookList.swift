/// A coordinator's `webhooks:` list as the chain's coordinators compare it beside their lease claims: the endpoints'
/// names, and a fingerprint of everything that decides what each endpoint receives (made by the coordinator from its
/// config; the registry only keeps and compares it). Two coordinators that may take a store over from each other
/// must have the same fingerprint, or the outbox's deliveries, keyed by endpoint name, change with the holder.
public struct WebhookList: Hashable, Sendable {
    /// Hex digits; equal for equal lists.
    public var fingerprint: String
    /// The endpoints' names, in order.
    public var endpoints: [String]

    public init(fingerprint: String, endpoints: [String]) {
        self.fingerprint = fingerprint
        self.endpoints = endpoints
    }
}
