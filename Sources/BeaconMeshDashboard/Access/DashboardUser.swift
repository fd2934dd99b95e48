/// A person who may sign in to the dashboard: a name, the bcrypt hash of their password, and the stores they see.
public struct DashboardUser: Sendable, Hashable {
    /// What they type as their name: 1–64 characters, no colon (HTTP Basic splits on it), no control characters.
    public var name: String
    /// Their password's bcrypt hash (`$2b$12$…`), as `PasswordHash.make` writes it; never the password itself.
    public var passwordHash: String
    /// The stores they may see.
    public var stores: StoreAccess

    public init(name: String, passwordHash: String, stores: StoreAccess) {
        self.name = name
        self.passwordHash = passwordHash
        self.stores = stores
    }

    /// Why `name` cannot be a user's name, or `nil` when it can.
    public static func problem(withName name: String) -> String? {
        if name.isEmpty || name.count > 64 { return "a user name is 1 to 64 characters" }
        if name.contains(":") { return "a user name must not contain ':' (HTTP Basic sign-in splits on it)" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "a user name must not contain control characters"
        }
        if name.first?.isWhitespace == true || name.last?.isWhitespace == true {
            return "a user name must not begin or end with a space"
        }
        return nil
    }
}
