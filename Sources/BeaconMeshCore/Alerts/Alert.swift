/// What a rule that fired tells the staff: the contract's alert payload. The rules leave `id` empty; the coordinator
/// gives each alert its unique id as it publishes it, as it does an event's.
public struct Alert: Hashable, Sendable {
    /// The contract's `kind`.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case memberArrived = "member-arrived"
        case dwell
        case nodeOffline = "node-offline"
        case storeUndecided = "store-undecided"
    }

    public var id = ""
    public var rule: String
    public var kind: Kind
    public var store: UInt16
    public var at: Timestamp
    public var department: UInt16?
    public var departmentName: String?
    public var member: MemberProfile?
    public var node: String?
    /// One line for a person: "Ana Souza (tier vip) arrived in Womenswear".
    public var text: String

    public init(
        rule: String, kind: Kind, store: UInt16, at: Timestamp, department: UInt16? = nil, departmentName: String? = nil,
        member: MemberProfile? = nil, node: String? = nil, text: String
    ) {
        self.rule = rule
        self.kind = kind
        self.store = store
        self.at = at
        self.department = department
        self.departmentName = departmentName
        self.member = member
        self.node = node
        self.text = text
    }
}
