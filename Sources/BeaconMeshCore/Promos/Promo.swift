/// A department deal as events and offers carry it: id, title and message.
public struct Promo: Hashable, Sendable {
    public var id: String
    public var title: String
    public var message: String

    public init(id: String, title: String, message: String) {
        self.id = id
        self.title = title
        self.message = message
    }
}
