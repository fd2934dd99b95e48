/// A till asking to check a member in, published on `stores/{store}/checkins`: the contract's check-in request.
public struct CheckinRequest: Hashable, Sendable {
    /// Unique per request: a request is counted once however often it is delivered.
    public var id: String
    /// The member id asked for, as the till has it.
    public var member: String
    /// The till's department.
    public var department: UInt16
    /// Which till asked.
    public var till: String
    public var at: Timestamp

    public init(id: String, member: String, department: UInt16, till: String, at: Timestamp) {
        self.id = id
        self.member = member
        self.department = department
        self.till = till
        self.at = at
    }
}

/// Why a check-in was refused: the contract's `reason`.
public enum CheckinRefusal: String, Hashable, Sendable {
    /// The member was not heard `immediate` or `near` in the till's department within the last 5 s.
    case notNearTill = "not-near-till"
    case unknownMember = "unknown-member"
    /// The department is not marked `till: true`.
    case notATill = "not-a-till"
}
