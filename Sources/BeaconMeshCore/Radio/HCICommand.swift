/// One HCI command as the host sends it to the controller: an opcode and its parameters, little-endian.
///
/// `packet` is the H4 framing a raw HCI socket (and a btsnoop datalink 1002 file) carries:
/// `01 | opcode (2, little-endian) | parameter length (1) | parameters`.
/// The static functions build the commands BeaconMesh sends; their byte layouts follow the Bluetooth Core
/// specification (Vol 4, Part E, 7.8) and are pinned by tests against commands recorded from real hosts.
public struct HCICommand: Hashable, Sendable {
    /// The H4 packet indicator of an HCI command.
    public static let h4CommandIndicator: UInt8 = 0x01
    /// The most parameter bytes one command can carry.
    public static let maximumParameterLength = 255

    /// Which command this is.
    public var opcode: HCIOpcode
    /// The command's parameters, already in wire order (at most 255 bytes).
    public var parameters: [UInt8]

    /// A command with `parameters` already laid out; traps if there are more than 255 bytes (a programming error).
    public init(opcode: HCIOpcode, parameters: [UInt8] = []) {
        precondition(parameters.count <= Self.maximumParameterLength, "HCI command parameters exceed 255 bytes")
        self.opcode = opcode
        self.parameters = parameters
    }

    /// The command in H4 framing: `01 | opcode LE | length | parameters`.
    public var packet: [UInt8] {
        [
            Self.h4CommandIndicator, UInt8(truncatingIfNeeded: opcode.rawValue), UInt8(opcode.rawValue >> 8),
            UInt8(parameters.count),
        ] + parameters
    }

    // MARK: - Controller

    /// Reset (0x0C03): returns the controller to its power-on state. No parameters.
    public static let reset = HCICommand(opcode: .reset)

    /// LE Read Local Supported Features (0x2003): asks which LE features the controller has (see `LESupportedFeatures`).
    public static let leReadLocalSupportedFeatures = HCICommand(opcode: .leReadLocalSupportedFeatures)

    // MARK: - Scanning, Bluetooth 4 (legacy) commands

    /// LE Set Scan Parameters (0x200B): `scan type | interval (2) | window (2) | own address type | filter policy`.
    ///
    /// `ownAddressType` 0 is the adapter's public address; `filterPolicy` 0 accepts every advertiser.
    public static func leSetScanParameters(
        _ settings: ScanSettings, ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0
    ) -> HCICommand {
        var parameters = [settings.mode.scanType]
        appendLittleEndian16(settings.intervalUnits, to: &parameters)
        appendLittleEndian16(settings.windowUnits, to: &parameters)
        parameters += [ownAddressType, filterPolicy]
        return HCICommand(opcode: .leSetScanParameters, parameters: parameters)
    }

    /// LE Set Scan Enable (0x200C): `enable | filter duplicates`.
    ///
    /// BeaconMesh scans with `filterDuplicates: false`: a filtering controller reports each advertiser once, and the
    /// RSSI filter needs every advertisement.
    public static func leSetScanEnable(_ enabled: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(opcode: .leSetScanEnable, parameters: [enabled ? 1 : 0, filterDuplicates ? 1 : 0])
    }

    // MARK: - Scanning, Bluetooth 5 (extended) commands

    /// LE Set Extended Scan Parameters (0x2041) for the LE 1M PHY only:
    /// `own address type | filter policy | PHYs = 0x01 | scan type | interval (2) | window (2)`.
    ///
    /// Beacons advertise on the 1M PHY; listening on Coded PHY as well would halve the time spent on 1M.
    public static func leSetExtendedScanParameters(
        _ settings: ScanSettings, ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0
    ) -> HCICommand {
        let le1MPHY: UInt8 = 0x01
        var parameters = [ownAddressType, filterPolicy, le1MPHY, settings.mode.scanType]
        appendLittleEndian16(settings.intervalUnits, to: &parameters)
        appendLittleEndian16(settings.windowUnits, to: &parameters)
        return HCICommand(opcode: .leSetExtendedScanParameters, parameters: parameters)
    }

    /// LE Set Extended Scan Enable (0x2042): `enable | filter duplicates | duration (2) | period (2)`.
    ///
    /// Duration and period 0: scan continuously until disabled.
    public static func leSetExtendedScanEnable(_ enabled: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(
            opcode: .leSetExtendedScanEnable, parameters: [enabled ? 1 : 0, filterDuplicates ? 1 : 0, 0, 0, 0, 0])
    }

    // MARK: - Advertising, Bluetooth 4 (legacy) commands

    /// LE Set Advertising Parameters (0x2006) for a non-connectable beacon (`ADV_NONCONN_IND`):
    /// `interval min (2) | interval max (2) | type | own address type | peer address type | peer address (6) |
    /// channel map | filter policy`.
    public static func leSetAdvertisingParameters(
        _ settings: AdvertisingSettings = AdvertisingSettings(), ownAddressType: UInt8 = 0
    ) -> HCICommand {
        var parameters: [UInt8] = []
        appendLittleEndian16(settings.minimumIntervalUnits, to: &parameters)
        appendLittleEndian16(settings.maximumIntervalUnits, to: &parameters)
        parameters += [AdvertisingSettings.nonConnectableAdvertisingType, ownAddressType, 0]
        parameters += [UInt8](repeating: 0, count: 6)
        parameters += [AdvertisingSettings.allChannels, 0]
        return HCICommand(opcode: .leSetAdvertisingParameters, parameters: parameters)
    }

    /// LE Set Advertising Data (0x2008): `length | data padded with zeros to 31 bytes`.
    ///
    /// Traps if `data` is longer than 31 bytes, the legacy limit (a programming error: `IBeaconAdvertisingData` is 30).
    public static func leSetAdvertisingData(_ data: [UInt8]) -> HCICommand {
        precondition(data.count <= 31, "legacy advertising data is at most 31 bytes")
        let parameters = [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count)
        return HCICommand(opcode: .leSetAdvertisingData, parameters: parameters)
    }

    /// LE Set Advertise Enable (0x200A): `enable`.
    public static func leSetAdvertiseEnable(_ enabled: Bool) -> HCICommand {
        HCICommand(opcode: .leSetAdvertiseEnable, parameters: [enabled ? 1 : 0])
    }

    // MARK: - Advertising, Bluetooth 5 (extended) commands

    /// LE Set Extended Advertising Parameters (0x2036) for advertising set `handle`, sending legacy
    /// `ADV_NONCONN_IND` PDUs (so every scanner, Bluetooth 4 phones included, hears them) on the 1M PHY.
    ///
    /// Layout (25 bytes): `handle | event properties (2) | interval min (3) | interval max (3) | channel map |
    /// own address type | peer address type | peer address (6) | filter policy | TX power | primary PHY |
    /// secondary max skip | secondary PHY | SID | scan request notifications`. `txPower` `nil` means
    /// "no preference" (0x7F).
    public static func leSetExtendedAdvertisingParameters(
        handle: UInt8, _ settings: AdvertisingSettings = AdvertisingSettings(), ownAddressType: UInt8 = 0,
        txPower: Int8? = nil
    ) -> HCICommand {
        let le1MPHY: UInt8 = 0x01
        var parameters = [handle]
        appendLittleEndian16(AdvertisingSettings.legacyNonConnectableEventProperties, to: &parameters)
        appendLittleEndian16(settings.minimumIntervalUnits, to: &parameters)
        parameters.append(0)
        appendLittleEndian16(settings.maximumIntervalUnits, to: &parameters)
        parameters.append(0)
        parameters += [AdvertisingSettings.allChannels, ownAddressType, 0]
        parameters += [UInt8](repeating: 0, count: 6)
        parameters += [0, UInt8(bitPattern: txPower ?? 0x7F), le1MPHY, 0, le1MPHY, 0, 0]
        return HCICommand(opcode: .leSetExtendedAdvertisingParameters, parameters: parameters)
    }

    /// LE Set Extended Advertising Data (0x2037) for set `handle`, all in one piece:
    /// `handle | operation 0x03 (complete data) | fragment preference 0x01 (do not fragment) | length | data`.
    ///
    /// Traps if `data` is longer than 31 bytes: with legacy PDUs the controller takes no more.
    public static func leSetExtendedAdvertisingData(handle: UInt8, _ data: [UInt8]) -> HCICommand {
        precondition(data.count <= 31, "legacy-PDU advertising data is at most 31 bytes")
        let completeData: UInt8 = 0x03
        let doNotFragment: UInt8 = 0x01
        return HCICommand(
            opcode: .leSetExtendedAdvertisingData,
            parameters: [handle, completeData, doNotFragment, UInt8(data.count)] + data)
    }

    /// LE Set Extended Advertising Enable (0x2039) for the one set `handle`, with no time or event limit:
    /// `enable | number of sets = 1 | handle | duration (2) = 0 | max events = 0`.
    public static func leSetExtendedAdvertisingEnable(_ enabled: Bool, handle: UInt8) -> HCICommand {
        HCICommand(opcode: .leSetExtendedAdvertisingEnable, parameters: [enabled ? 1 : 0, 1, handle, 0, 0, 0])
    }

    private static func appendLittleEndian16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(value >> 8))
    }
}
