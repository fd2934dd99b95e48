/// Why a credential could not be provisioned or revoked, in words for the person running the command, and as a
/// `kind` a caller can match.
public struct ProvisioningError: Error, Equatable, CustomStringConvertible {
    /// What went wrong, for a caller that must tell the cases apart (the words stay in `description`).
    public enum Kind: Equatable, Sendable {
        /// A user name, member id or coordinator id that cannot be a BeaconMesh credential.
        case invalidName
        /// A file or folder (password file, ACL, credential files, their lock) cannot be read, written or locked.
        case fileAccess
        /// `mosquitto_passwd` is missing, cannot be run, or refused the change.
        case passwordTool
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
