import BeaconMeshCore

/// One of the config's `webhooks:`: where the coordinator POSTs the events and alerts of the types it asks for, signed
/// with its secret.
public struct WebhookEndpoint: Sendable, Equatable {
    /// The contract's names of what an endpoint may ask for.
    public enum EventType: String, Sendable, CaseIterable {
        case arrived, moved, resumed, left, promo, checkin, node, alert
        case memberForgotten = "member-forgotten"
    }

    /// Names the endpoint in the outbox, health, metrics and `webhooks test NAME`.
    public var name: String
    /// `https://…`, or `http://` to a loopback address.
    public var url: String
    /// The file holding the secret (read by `CoordinatorConfiguration.load` into `secret`).
    public var secretFile: String
    /// The HMAC key: the file's bytes without a final line break.
    public var secret: [UInt8] = []
    public var events: Set<EventType>
    /// Whether a member's name, drink, photo and fields go out (otherwise a member is `{"id":"…"}` only).
    public var personalData = false
    /// A CA certificate (PEM) to verify the receiver with, instead of the system's store.
    public var cafile: String?

    public init(name: String, url: String, secretFile: String, events: Set<EventType>) {
        self.name = name
        self.url = url
        self.secretFile = secretFile
        self.events = events
    }

    /// Whether `url` is one the coordinator may POST to: `https://`, or plain `http://` to a loopback address only
    /// (a receiver on the same machine). `nil` when it may; otherwise why not.
    static func refusal(of url: String) -> String? {
        let lowered = url.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = lowered.dropFirst("https://".count)
        } else if lowered.hasPrefix("http://") {
            rest = lowered.dropFirst("http://".count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            let host = authority.split(separator: "@").last.map(String.init) ?? ""
            let name: String
            if host.hasPrefix("[") {
                name = String(host.dropFirst().prefix { $0 != "]" })
            } else {
                name = String(host.prefix { $0 != ":" })
            }
            let loopback = name == "localhost" || name == "::1" || (name.hasPrefix("127.") && name.split(separator: ".").count == 4)
            if !loopback { return "must be https:// (plain http:// only to a loopback address such as 127.0.0.1)" }
        } else {
            return "must be an https:// URL"
        }
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if host.isEmpty || host.contains(" ") { return "has no host" }
        return nil
    }
}
