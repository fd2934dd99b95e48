/// A loyalty member as events and snapshots show them: the contract's `member` object.
public struct MemberProfile: Hashable, Sendable {
    public var id: String
    public var name: String
    public var favoriteDrink: String?
    /// Completed and current visits, counted at each arrival.
    public var visits: Int
    public var lastVisitAt: Timestamp?
    /// Check-ins at a till, counted once per request.
    public var checkins: Int
    /// A `data:` URL of a small thumbnail.
    public var photo: String?
    /// Extra CSV columns, kept and shown as they came.
    public var customFields: [String: String]

    public init(
        id: String, name: String, favoriteDrink: String? = nil, visits: Int = 0, lastVisitAt: Timestamp? = nil,
        photo: String? = nil, customFields: [String: String] = [:], checkins: Int = 0
    ) {
        self.checkins = checkins
        self.id = id
        self.name = name
        self.favoriteDrink = favoriteDrink
        self.visits = visits
        self.lastVisitAt = lastVisitAt
        self.photo = photo
        self.customFields = customFields
    }
}
