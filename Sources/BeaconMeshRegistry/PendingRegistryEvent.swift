import BeaconMeshCore

/// A registry event in the registry's outbox, waiting to be published: its number there, what happened, to whom.
public struct PendingRegistryEvent: Sendable, Equatable {
    public var seq: Int64
    public var kind: RegistryEvent.Kind
    public var member: String
    public var at: Timestamp

    public init(seq: Int64, kind: RegistryEvent.Kind, member: String, at: Timestamp) {
        self.seq = seq
        self.kind = kind
        self.member = member
        self.at = at
    }
}
