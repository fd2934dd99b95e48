/// What the chain's page shows of one store for a period `[from, to)`: its finished member visits, the members among
/// them (new and repeat, as in the analytics object), guest visits, the average member visit and the check-ins.
///
/// Every store's summary comes from one grouped pass over the chain's history, so a chain of a thousand stores costs
/// three queries, not a thousand reports. The average stands where a store's report has the median: a median per
/// store would sort every visit of the chain.
public struct StoreSummary: Hashable, Sendable {
    public var store: UInt16
    /// Finished member visits that started in the period.
    public var memberVisits: Int
    /// Members, new members, repeat members and guest visits, counted as the analytics object counts them.
    public var visits: StoreAnalytics.Visits
    /// The average finished member visit, in whole seconds.
    public var averageVisit: Int
    /// Check-ins at the tills during the period's finished visits.
    public var checkins: Int

    public init(store: UInt16, memberVisits: Int = 0, visits: StoreAnalytics.Visits = .init(), averageVisit: Int = 0, checkins: Int = 0) {
        self.store = store
        self.memberVisits = memberVisits
        self.visits = visits
        self.averageVisit = averageVisit
        self.checkins = checkins
    }
}
