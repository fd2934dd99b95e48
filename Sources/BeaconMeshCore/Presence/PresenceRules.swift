/// The timing and hysteresis that decide presence: the contract's `presence` config block.
public struct PresenceRules: Hashable, Sendable {
    /// A reading older than this does not count.
    public var staleAfter: Duration = .seconds(5)
    /// A member no node has heard for this long has left.
    public var exitAfter: Duration = .seconds(30)
    /// Another department must beat the current one by this many dB …
    public var switchMargin: Double = 4
    /// … for this long before the member counts as moved.
    public var switchDwell: Duration = .seconds(3)
    /// Coming back within this time after leaving continues the visit.
    public var visitGap: Duration = .seconds(20 * 60)

    public init() {}

    /// How long the engine waits after first hearing a member before choosing where they arrived,
    /// so that the first batch of a far node does not decide it: the shorter of 1 s and `switchDwell`.
    public var arrivalSettle: Duration { min(.seconds(1), switchDwell) }
}

/// One department as the presence engine needs it: its id and, if it overrides any, its own rules.
public struct DepartmentLayout: Hashable, Sendable {
    public var id: UInt16
    public var rules: PresenceRules
    /// Readings of this department weaker than this (dBm) do not count: a node that hears through a wall or a floor.
    public var minRSSI: Double?
    /// The departments one can walk to from this one directly; `nil`: every department. A move to a department that
    /// is not a neighbour needs the evidence for twice as long.
    public var neighbours: Set<UInt16>?

    public init(id: UInt16, rules: PresenceRules, minRSSI: Double? = nil, neighbours: Set<UInt16>? = nil) {
        self.id = id
        self.rules = rules
        self.minRSSI = minRSSI
        self.neighbours = neighbours
    }
}
