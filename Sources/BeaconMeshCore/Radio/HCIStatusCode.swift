/// The one-byte status an HCI controller answers a command with; 0 is success, anything else says why it refused.
///
/// `explanation` words the codes a scanner or advertiser meets in the field; others show as their hex value.
public struct HCIStatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The status byte.
    public var rawValue: UInt8

    /// The status with this byte.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// 0x00: the command succeeded.
    public static let success = HCIStatusCode(rawValue: 0x00)
    /// 0x01: the controller does not know the command.
    public static let unknownCommand = HCIStatusCode(rawValue: 0x01)
    /// 0x0C: the command is not allowed now (typically: another program is already scanning or advertising).
    public static let commandDisallowed = HCIStatusCode(rawValue: 0x0C)
    /// 0x11: the controller lacks the feature or parameter value.
    public static let unsupportedFeature = HCIStatusCode(rawValue: 0x11)
    /// 0x12: a parameter is out of range.
    public static let invalidParameters = HCIStatusCode(rawValue: 0x12)
    /// 0x3A: the controller is busy.
    public static let controllerBusy = HCIStatusCode(rawValue: 0x3A)

    /// Whether the command succeeded.
    public var isSuccess: Bool { rawValue == 0 }

    /// A few plain words for the status, e.g. `command disallowed`.
    public var explanation: String {
        switch rawValue {
        case 0x00: "success"
        case 0x01: "unknown command"
        case 0x03: "hardware failure"
        case 0x07: "memory capacity exceeded"
        case 0x0C: "command disallowed"
        case 0x11: "unsupported feature or parameter value"
        case 0x12: "invalid command parameters"
        case 0x1F: "unspecified error"
        case 0x3A: "controller busy"
        case 0x42: "unknown advertising identifier"
        case 0x43: "limit reached"
        default: "error"
        }
    }

    /// The explanation and the code, e.g. `command disallowed (status 0x0c)`.
    public var description: String {
        "\(explanation) (status 0x\(HexDigits.string(UInt64(rawValue), digits: 2)))"
    }
}
