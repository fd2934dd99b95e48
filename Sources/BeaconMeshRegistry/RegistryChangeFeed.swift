/// Changes to the registry made by others (another coordinator, the `members` command), as they happen.
///
/// `next(timeout:)` blocks its caller's thread (a queue of the coordinator's own) until something changed or
/// `timeout` passed.
public protocol RegistryChangeFeed: AnyObject, Sendable {
    /// What changed since the last call, waiting up to `timeout` for something to; `.nothing` after `timeout`.
    /// Throws while the database cannot be reached (the next call tries again).
    func next(timeout: Duration) throws -> RegistryChange

    /// Stops watching; a waiting `next` returns.
    func close()
}

/// What a change feed saw.
public enum RegistryChange: Sendable, Equatable {
    /// Nothing changed.
    case nothing
    /// These members were added, changed, removed or forgotten (read them again to know which).
    case members(Set<String>)
    /// Anything may have changed (the feed started, or notifications may have been missed): read everything again.
    case everything
}

extension RegistryChange {
    /// The member a registry's change log (`member_change`, both backends) names for "anyone may have changed": a
    /// forgotten member's own entries are deleted and this one logged instead (no member has an empty id).
    static let everyoneLogged = ""
}
