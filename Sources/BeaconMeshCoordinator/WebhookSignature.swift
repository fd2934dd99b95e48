import Crypto

/// The contract's webhook signature: `sha256=` and the hex HMAC-SHA256 of `"{timestamp}.{body}"` keyed with the
/// endpoint's secret (swift-crypto's HMAC: never a hash of our own). A receiver computes the same over the
/// `BeaconMesh-Timestamp` header and the raw body, compares in constant time, and refuses an old timestamp.
enum WebhookSignature {
    static func header(secret: [UInt8], timestamp: Int64, body: [UInt8]) -> String {
        var authenticated = HMAC<SHA256>(key: SymmetricKey(data: secret))
        authenticated.update(data: Array("\(timestamp).".utf8))
        authenticated.update(data: body)
        let digest = authenticated.finalize()
        return "sha256="
            + digest.map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
    }
}
