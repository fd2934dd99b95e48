import BeaconMeshCore

/// The registry as the dashboard reads a store's history and analytics (see `MemberRegistry`).
public protocol AnalyticsReading: RegistryBackend {
    /// The member visits kept for `store` that began in `[from, to)`, oldest first, with their stops, offers and
    /// check-ins.
    func history(store: UInt16, from: Timestamp, to: Timestamp) throws -> [VisitRecord]

    /// The contract's analytics object for `store` and `[from, to)`, computed by the database (`AnalyticsQuery`).
    func analytics(store: UInt16, from: Timestamp, to: Timestamp) throws -> StoreAnalytics

    /// Every store's summary for `[from, to)` (the stores with history in it, in order), from grouped queries over
    /// the chain (`AnalyticsQuery.summaries`).
    func storeSummaries(from: Timestamp, to: Timestamp) throws -> [StoreSummary]

    /// The stores the history holds anything of, in order.
    func historyStores() throws -> [UInt16]
}
