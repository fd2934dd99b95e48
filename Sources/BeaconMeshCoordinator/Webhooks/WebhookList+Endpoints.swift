import BeaconMeshRegistry
import Crypto

extension WebhookList {
    /// The config's `endpoints` as the chain's coordinators compare them: their names, and the first 16 bytes (hex)
    /// of a SHA-256 (swift-crypto) over each endpoint's name, URL, events, `personalData` and secret, in name order —
    /// what decides what an endpoint receives and how it is signed. The order of the list and the path of a CA file
    /// (one CA may sit in another folder on another server) do not count; the secret is in the digest only.
    init(endpoints: [WebhookEndpoint]) {
        var hash = SHA256()
        let ordered = endpoints.sorted { $0.name < $1.name }
        for endpoint in ordered {
            let events = endpoint.events.map(\.rawValue).sorted().joined(separator: ",")
            for field in [endpoint.name, endpoint.url, events, endpoint.personalData ? "personal" : "ids"] {
                hash.update(data: Array(field.utf8) + [0])
            }
            hash.update(data: withUnsafeBytes(of: UInt64(endpoint.secret.count).bigEndian, Array.init) + endpoint.secret)
        }
        let digest = Array(hash.finalize())
        self.init(
            fingerprint: digest.prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(),
            endpoints: ordered.map(\.name))
    }
}
