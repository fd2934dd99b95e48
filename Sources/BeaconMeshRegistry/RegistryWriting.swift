import BeaconMeshCore

/// The registry as the coordinator's `RegistryWriter` writes it: what the decisions changed, one batch at a time
/// (see `MemberRegistry`).
public protocol RegistryWriting: RegistryBackend {
    /// Writes `changes` in one transaction, at most once: a batch whose `batch` id was already applied (the answer
    /// to its commit was lost, and the writer tries it again) is skipped. Counts are added to the stored ones; rows
    /// of unknown members are skipped. An ended visit deletes the member's saved visit in `stores` (all if `nil`).
    func apply(_ changes: RegistryChanges, batch: String?, stores: Set<UInt16>?) throws
}

extension RegistryWriting {
    /// Writes `changes` in one transaction (no batch id, every store).
    public func apply(_ changes: RegistryChanges) throws { try apply(changes, batch: nil, stores: nil) }

    /// Records that `promo` fired for `member` at `time` (replacing the previous firing).
    public func recordPromoFire(member: String, promo: String, store: UInt16, at time: Timestamp) throws {
        var changes = RegistryChanges()
        changes.promoFired(promo, member: member, store: store, at: time)
        try apply(changes)
    }
}
