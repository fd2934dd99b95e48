/// A registry that cannot be opened or used, in words an IT person understands (naming the file or host), and as a
/// `kind` a caller can match.
public struct RegistryFailure: Error, CustomStringConvertible, Equatable {
    /// What went wrong, for a caller that must tell the cases apart (the words stay in `description`).
    public enum Kind: Equatable, Sendable {
        /// The database's location cannot be used: an empty or malformed URL, an unknown parameter, an unreadable
        /// password file, TLS settings that cannot be set up.
        case invalidLocation
        /// The database is there in words but cannot be reached or used now (connection, query, lock file).
        case unavailable
        /// The file is not a BeaconMesh database, or is damaged.
        case damaged
        /// The database was made or upgraded by a newer BeaconMesh than this program.
        case newerSchema
        /// Another coordinator already runs on this SQLite registry.
        case heldByAnotherCoordinator
        /// A request the registry cannot answer as asked (an empty or too long period, a bad role name).
        case invalidRequest
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
