/// A promo sent to one member's app on `members/{member}/offers`: the contract's offer.
public struct Offer: Hashable, Sendable {
    public var id: String
    public var member: String
    public var store: UInt16
    public var department: UInt16
    public var promo: Promo
    public var at: Timestamp

    public init(id: String, member: String, store: UInt16, department: UInt16, promo: Promo, at: Timestamp) {
        self.id = id
        self.member = member
        self.store = store
        self.department = department
        self.promo = promo
        self.at = at
    }
}
