/// Why a credential could not be provisioned or revoked, in words for the person running the command.
public struct ProvisioningError: Error, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
