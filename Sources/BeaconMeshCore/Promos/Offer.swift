/// A promo sent to one member's app on `members/{member}/offers`: the contract's offer.
public struct Offer: Hashable, Sendable {
    public var id: String
    public var member: String
    public var store: UInt16
    public var department: UInt16
    /// The department's name, for the app to show (an added field of the offer payload; `nil` when not sent).
    public var departmentName: String?
    public var promo: Promo
    public var at: Timestamp

    public init(
        id: String, member: String, store: UInt16, department: UInt16, departmentName: String? = nil, promo: Promo,
        at: Timestamp
    ) {
        self.id = id
        self.member = member
        self.store = store
        self.department = department
        self.departmentName = departmentName
        self.promo = promo
        self.at = at
    }
}
