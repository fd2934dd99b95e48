/// A 16-bit HCI command opcode: a 6-bit group (OGF) and a 10-bit command number (OCF), sent little-endian.
///
/// The constants are the commands BeaconMesh sends; `name` gives the Bluetooth Core specification's name for them,
/// so that error messages can say which command an adapter refused.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The opcode as sent on the wire (`ogf << 10 | ocf`).
    public var rawValue: UInt16

    /// The opcode with this raw value.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The opcode of command `ocf` in group `ogf`; `ogf` is cut to 6 bits and `ocf` to 10 bits.
    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x3FF)
    }

    /// The opcode group field (0x03 controller & baseband, 0x08 LE controller).
    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    /// The opcode command field within its group.
    public var ocf: UInt16 { rawValue & 0x3FF }

    /// OGF of controller & baseband commands.
    public static let controllerAndBasebandGroup: UInt8 = 0x03
    /// OGF of LE controller commands.
    public static let leControllerGroup: UInt8 = 0x08

    /// Reset (0x0C03).
    public static let reset = HCIOpcode(ogf: controllerAndBasebandGroup, ocf: 0x003)
    /// LE Read Local Supported Features (0x2003).
    public static let leReadLocalSupportedFeatures = HCIOpcode(ogf: leControllerGroup, ocf: 0x003)
    /// LE Set Advertising Parameters (0x2006).
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: leControllerGroup, ocf: 0x006)
    /// LE Set Advertising Data (0x2008).
    public static let leSetAdvertisingData = HCIOpcode(ogf: leControllerGroup, ocf: 0x008)
    /// LE Set Advertise Enable (0x200A).
    public static let leSetAdvertiseEnable = HCIOpcode(ogf: leControllerGroup, ocf: 0x00A)
    /// LE Set Scan Parameters (0x200B).
    public static let leSetScanParameters = HCIOpcode(ogf: leControllerGroup, ocf: 0x00B)
    /// LE Set Scan Enable (0x200C).
    public static let leSetScanEnable = HCIOpcode(ogf: leControllerGroup, ocf: 0x00C)
    /// LE Set Extended Advertising Parameters (0x2036).
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(ogf: leControllerGroup, ocf: 0x036)
    /// LE Set Extended Advertising Data (0x2037).
    public static let leSetExtendedAdvertisingData = HCIOpcode(ogf: leControllerGroup, ocf: 0x037)
    /// LE Set Extended Advertising Enable (0x2039).
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(ogf: leControllerGroup, ocf: 0x039)
    /// LE Set Extended Scan Parameters (0x2041).
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: leControllerGroup, ocf: 0x041)
    /// LE Set Extended Scan Enable (0x2042).
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: leControllerGroup, ocf: 0x042)

    /// The specification's name of the command, or `HCI command` for one BeaconMesh does not send.
    public var name: String {
        switch self {
        case .reset: "Reset"
        case .leReadLocalSupportedFeatures: "LE Read Local Supported Features"
        case .leSetAdvertisingParameters: "LE Set Advertising Parameters"
        case .leSetAdvertisingData: "LE Set Advertising Data"
        case .leSetAdvertiseEnable: "LE Set Advertise Enable"
        case .leSetScanParameters: "LE Set Scan Parameters"
        case .leSetScanEnable: "LE Set Scan Enable"
        case .leSetExtendedAdvertisingParameters: "LE Set Extended Advertising Parameters"
        case .leSetExtendedAdvertisingData: "LE Set Extended Advertising Data"
        case .leSetExtendedAdvertisingEnable: "LE Set Extended Advertising Enable"
        case .leSetExtendedScanParameters: "LE Set Extended Scan Parameters"
        case .leSetExtendedScanEnable: "LE Set Extended Scan Enable"
        default: "HCI command"
        }
    }

    /// The name and the hex opcode, e.g. `LE Set Scan Enable (0x200C)`.
    public var description: String {
        "\(name) (0x\(HexDigits.string(UInt64(rawValue), digits: 4).uppercased()))"
    }
}
