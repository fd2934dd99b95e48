import BeaconMeshCore
import BeaconMeshService
import BeaconMeshWire
import Foundation

/// `beacon-coordinator webhooks test NAME`: one signed `test` event POSTed to the endpoint, as its courier would.
public enum WebhookTest {
    /// Sends it; returns the line to print and whether the endpoint took it (any 2xx).
    public static func send(to endpoint: WebhookEndpoint) -> (line: String, delivered: Bool) {
        let client: WebhookClient
        do {
            client = try WebhookClient(endpoint: endpoint)
        } catch {
            return ("\(endpoint.name): cannot use cafile \(endpoint.cafile ?? ""): \(error)", false)
        }
        defer { client.shutdown() }
        let now = WallClock.now()
        let id = "test-\(UUID().uuidString.lowercased())"
        let started = ContinuousClock.now
        let outcome = client.post(body: WireCodec.encodeWebhookTest(id: id, at: now), eventID: id, timestamp: now.milliseconds / 1000)
        let took = "\((ContinuousClock.now - started).wholeMilliseconds) ms"
        switch outcome {
        case .delivered(let status): return ("\(endpoint.name): \(status) from \(endpoint.url) in \(took) (event \(id))", true)
        case .refused(let status): return ("\(endpoint.name): \(status) from \(endpoint.url) in \(took): refused, not retried", false)
        case .failed(let cause): return ("\(endpoint.name): not delivered to \(endpoint.url) after \(took): \(cause)", false)
        }
    }
}
