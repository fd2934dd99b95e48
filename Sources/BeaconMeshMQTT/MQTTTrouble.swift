/// Something an MQTT client met and got over, or keeps retrying, reported to its caller (`MQTTConnectionEvent.trouble`,
/// and what `disconnect` returns) to log as the program sees fit: the MQTT module itself logs at info or lower, as it
/// cannot tell whether a trouble matters to the program.
public enum MQTTTrouble: Sendable, Hashable, CustomStringConvertible {
    /// The first connection attempt failed at once; the client retries in the background.
    case notReachableYet(String)
    /// An error line of libmosquitto's own (OpenSSL's reason for a rejected certificate, a failed name lookup, …).
    case library(String)
    /// A subscription could not be renewed on a new connection.
    case resubscribeFailed(filter: String, error: String)
    /// The configuration's announcement could not be published on a new connection (the next connection tries again).
    case announcementFailed(String)
    /// The broker refused a subscription (not authorised for this topic?).
    case subscriptionRefused(filter: String)
    /// At `disconnect`: the final message could not be published.
    case finalMessageNotPublished(String)
    /// At `disconnect`: QoS 1 messages the broker had not acknowledged by the deadline; they are lost.
    case unacknowledgedAtClose(Int)

    public var description: String {
        switch self {
        case .notReachableYet(let error): "broker not reachable yet; retrying in the background: \(error)"
        case .library(let line): "libmosquitto: \(line)"
        case .resubscribeFailed(let filter, let error): "could not subscribe again to \(filter) after connecting: \(error)"
        case .announcementFailed(let error): "could not publish the announcement after connecting: \(error)"
        case .subscriptionRefused(let filter): "the broker refused the subscription to \(filter) (not authorised for this topic?)"
        case .finalMessageNotPublished(let error): "could not publish the final message: \(error)"
        case .unacknowledgedAtClose(let count): "disconnected with \(count) unacknowledged messages; they are lost"
        }
    }
}
