/// What a decider said of one person over time: the department from each change on (`nil`: not placed — unknown,
/// or not in the store), and how many times it changed department.
public struct DecisionTimeline: Sendable {
    /// The department decided from `at` on (epoch milliseconds), in time order.
    public private(set) var changes: [(at: Int64, department: UInt16?)] = []
    /// How many times the decided department went from one to another (a `moved`), not counting unknown spells
    /// that end in the same department.
    public private(set) var departmentChanges = 0
    private var lastKnown: UInt16?

    public init() {}

    /// Records that from `time` on the decision is `department`.
    public mutating func decide(_ department: UInt16?, at time: Int64) {
        guard changes.last.map({ $0.department != department }) ?? true else { return }
        changes.append((time, department))
        if let department {
            if let lastKnown, lastKnown != department { departmentChanges += 1 }
            lastKnown = department
        }
    }

    /// The decision at `time`.
    public func department(at time: Int64) -> UInt16? {
        var low = 0
        var high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle].at <= time { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : changes[low - 1].department
    }
}
