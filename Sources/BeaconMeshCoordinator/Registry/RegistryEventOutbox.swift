import BeaconMeshCore
import BeaconMeshRegistry

/// Publishes the registry events the `members` command and the CSV import leave in the registry's outbox, each once:
/// the coordinator claims the waiting rows (so that coordinators sharing a registry do not all publish them), an
/// event is published with an id made from its outbox number, then its row is deleted (through the registry
/// writer). Should the coordinator stop between the two, the event goes out again with the same id after the
/// restart, so that integrations can recognise it.
struct RegistryEventOutbox {
    let coordinatorID: String
    /// Rows published whose deletion may still be waiting in the registry writer.
    private var published: Set<Int64> = []

    init(coordinatorID: String) {
        self.coordinatorID = coordinatorID
    }

    /// Publishes every pending event not published yet (oldest first) with `send`; returns the deletions to write.
    mutating func publishPending(from registry: any RegistryReading, send: (RegistryEvent) throws -> Void) throws -> RegistryChanges {
        var changes = RegistryChanges()
        let pending = try registry.claimRegistryEvents(for: coordinatorID)
        published.formIntersection(pending.map(\.seq))
        for row in pending where !published.contains(row.seq) {
            try send(RegistryEvent(id: "\(coordinatorID)-registry-\(row.seq)", kind: row.kind, member: row.member, at: row.at))
            published.insert(row.seq)
            changes.registryEventPublished(row.seq)
        }
        return changes
    }
}
