import BeaconMeshRegistry
import Testing

@testable import BeaconMeshCoordinator

/// A coordinator's `webhooks:` list as its chain compares it: equal lists, equal fingerprints, whatever their order.
@Suite("Webhook lists compared across a chain")
struct WebhookListTests {
    static func endpoint(
        _ name: String, url: String = "https://crm.example/hook", events: Set<WebhookEndpoint.EventType> = [.arrived, .left]
    )
        -> WebhookEndpoint
    {
        var endpoint = WebhookEndpoint(name: name, url: url, secretFile: "\(name).secret", events: events)
        endpoint.secret = Array("secret of \(name)".utf8)
        return endpoint
    }

    @Test("the same endpoints in another order, or with the CA file elsewhere, are the same list; names come in name order")
    func sameList() {
        let list = WebhookList(endpoints: [Self.endpoint("erp"), Self.endpoint("crm")])
        var moved = Self.endpoint("crm")
        moved.cafile = "/etc/other/ca.pem"
        #expect(WebhookList(endpoints: [moved, Self.endpoint("erp")]) == list)
        #expect(list.endpoints == ["crm", "erp"])
        #expect(list.fingerprint.count == 32 && list.fingerprint.allSatisfy(\.isHexDigit))
        #expect(WebhookList(endpoints: []).endpoints.isEmpty && WebhookList(endpoints: []).fingerprint.count == 32)
    }

    @Test(
        "a list differs by an endpoint more or less, or one endpoint's URL, events, personal data or secret",
        arguments: ["endpoint", "url", "events", "personalData", "secret"])
    func differentList(change: String) {
        let list = WebhookList(endpoints: [Self.endpoint("crm"), Self.endpoint("erp")])
        var crm = Self.endpoint("crm")
        var others = [Self.endpoint("erp")]
        switch change {
        case "endpoint": others.append(Self.endpoint("bi"))
        case "url": crm.url = "https://crm.example/other"
        case "events": crm.events.insert(.moved)
        case "personalData": crm.personalData = true
        default: crm.secret = Array("another secret".utf8)
        }
        let changed = WebhookList(endpoints: [crm] + others)
        #expect(changed.fingerprint != list.fingerprint)
        #expect(!changed.fingerprint.contains("secret"))
    }
}
