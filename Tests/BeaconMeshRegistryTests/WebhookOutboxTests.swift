import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

@testable import BeaconMeshRegistry

@Suite("The webhook outbox, on both backends")
struct WebhookOutboxTests {
    static func delivery(_ endpoint: String, _ id: String, store: UInt16 = 1, member: String? = nil) -> WebhookDelivery {
        WebhookDelivery(
            endpoint: endpoint, store: store, eventID: id, body: Array(#"{"v":1,"id":"\#(id)"}"#.utf8), personalDataOf: member,
            createdAt: Timestamp(milliseconds: 1_800_000_000_000))
    }

    @Test(
        "deliveries are read per endpoint and store in the order written, counted, removed; a batch applied twice adds them once",
        arguments: Backend.allCases)
    func orderAndRemoval(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        var first = RegistryChanges()
        for n in 1...5 { first.queueWebhook(Self.delivery("crm", "e\(n)", store: n == 3 ? 2 : 1)) }
        first.queueWebhook(Self.delivery("bi", "e1"))
        var later = RegistryChanges()
        for n in 6...7 { later.queueWebhook(Self.delivery("crm", "e\(n)")) }
        first.merge(later)
        #expect(first.count == 8)
        try registry.apply(first, batch: "batch-1", stores: nil)
        try registry.apply(first, batch: "batch-1", stores: nil)
        let crm = try registry.pendingWebhookDeliveries(endpoint: "crm", stores: [1], limit: 10)
        #expect(crm.map(\.eventID) == ["e1", "e2", "e4", "e5", "e6", "e7"])
        #expect(crm.first?.body == Array(#"{"v":1,"id":"e1"}"#.utf8) && crm.allSatisfy { $0.endpoint == "crm" && $0.seq > 0 })
        #expect(try registry.pendingWebhookDeliveries(endpoint: "crm", stores: [1, 2], limit: 3).map(\.eventID) == ["e1", "e2", "e3"])
        #expect(try registry.webhookBacklog(endpoint: "crm", stores: [1, 2]) == 7)
        #expect(try registry.webhookBacklog(endpoint: "bi", stores: [2]) == 0)
        try registry.removeWebhookDeliveries(crm.prefix(2).map(\.seq))
        #expect(try registry.pendingWebhookDeliveries(endpoint: "crm", stores: [1], limit: 10).map(\.eventID) == ["e4", "e5", "e6", "e7"])
        #expect(try registry.webhookBacklog(endpoint: "bi", stores: [1]) == 1)
    }

    @Test(
        "forgetting a member erases the undelivered bodies that carry her personal data, not the id-only ones", arguments: Backend.allCases)
    func forgetErasesPersonalBodies(backend: Backend) throws {
        let registry = try backend.makeRegistry()
        _ = try registry.merge(
            try MembersCSV.parse(
                "id,name,favoriteDrink,beacons,photo,visits,lastVisitAt,createdAt\nana,Ana Souza,,,,0,,", file: "m.csv"))
        var changes = RegistryChanges()
        changes.queueWebhook(Self.delivery("crm", "e1", member: "ana"))
        changes.queueWebhook(Self.delivery("bi", "e1"))
        changes.queueWebhook(Self.delivery("crm", "e2", member: "zoe"))
        try registry.apply(changes, batch: nil, stores: nil)
        #expect(try registry.forget(id: "ana"))
        #expect(try registry.pendingWebhookDeliveries(endpoint: "crm", stores: [1], limit: 10).map(\.eventID) == ["e2"])
        #expect(try registry.pendingWebhookDeliveries(endpoint: "bi", stores: [1], limit: 10).map(\.eventID) == ["e1"])
    }
}
