/// A registry that cannot be opened or used, in words an IT person understands (naming the file or host).
public struct RegistryFailure: Error, CustomStringConvertible, Equatable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
