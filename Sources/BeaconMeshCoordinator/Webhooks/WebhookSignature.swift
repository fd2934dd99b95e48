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
        var text = Array("sha256=".utf8)
        text.reserveCapacity(7 + 2 * SHA256.byteCount)
        for byte in digest {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
