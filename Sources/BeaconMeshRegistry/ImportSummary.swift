/// What an import did: members added, updated and found unchanged.
public struct ImportSummary: Equatable, Sendable, CustomStringConvertible {
    public var added = 0
    public var updated = 0
    public var unchanged = 0

    public init(added: Int = 0, updated: Int = 0, unchanged: Int = 0) {
        self.added = added
        self.updated = updated
        self.unchanged = unchanged
    }

    public var description: String { "\(added) added, \(updated) updated, \(unchanged) unchanged" }
}
