import BeaconMeshCore
import BeaconMeshService
import BeaconMeshWire
import Foundation

/// `beacon-coordinator webhooks test NAME`: one signed `test` event POSTed to the endpoint, as its courier would.
public enum WebhookTest {
    /// Sends it; returns the line to print and whether the endpoint took it (any 2xx).
    public static func send(to endpoint: WebhookEndpoint) async -> (line: String, delivered: Bool) {
        let target: WebhookClient.Target
        do {
            target = try WebhookClient.Target(endpoint)
        } catch {
            return ("\(endpoint.name): cannot use cafile \(endpoint.cafile ?? ""): \(error)", false)
        }
        let client = WebhookClient()
        let now = WallClock.now()
        let id = "test-\(UUID().uuidString.lowercased())"
        let started = ContinuousClock.now
        let outcome = await client.post(
            body: WireCodec.encodeWebhookTest(id: id, at: now), eventID: id, to: target, timestamp: now.milliseconds / 1000)
        await client.shutdown()
        let took = "\((ContinuousClock.now - started).wholeMilliseconds) ms"
        switch outcome {
        case .delivered(let status): return ("\(endpoint.name): \(status) from \(endpoint.url) in \(took) (event \(id))", true)
        case .refused(let status): return ("\(endpoint.name): \(status) from \(endpoint.url) in \(took): refused, not retried", false)
        case .failed(let cause): return ("\(endpoint.name): not delivered to \(endpoint.url) after \(took): \(cause)", false)
        }
    }
}
