/// A change to the member registry, published on `registry/events` for integrations: the member id only, never
/// personal data.
public struct RegistryEvent: Hashable, Sendable {
    /// What happened to the member.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case added = "member-added"
        case updated = "member-updated"
        case removed = "member-removed"
        case forgotten = "member-forgotten"
    }

    public var id: String
    public var kind: Kind
    public var member: String
    public var at: Timestamp

    public init(id: String, kind: Kind, member: String, at: Timestamp) {
        self.id = id
        self.kind = kind
        self.member = member
        self.at = at
    }
}
