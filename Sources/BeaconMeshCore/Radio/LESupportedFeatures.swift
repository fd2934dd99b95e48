/// The LE features a controller reports in answer to LE Read Local Supported Features (0x2003): a 64-bit mask.
///
/// Bit `n` is bit `n % 8` of byte `n / 8` of the 8 return bytes (Bluetooth Core Vol 6, Part B, 4.6).
/// BeaconMesh only asks about bit 12, "LE Extended Advertising": a controller with it takes the extended scan and
/// advertising commands, and then prefers them (see `LEScanner`).
public struct LESupportedFeatures: Hashable, Sendable {
    /// The feature mask, bit 0 = LE Encryption.
    public var rawValue: UInt64

    /// Bit number of "LE Extended Advertising".
    public static let extendedAdvertisingBit = 12

    /// Features with this mask.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// The features in the answer to LE Read Local Supported Features, or `nil` if `response` is not a successful
    /// answer to that command with all 8 feature bytes.
    public init?(_ response: HCICommandResponse) {
        guard response.kind == .complete, response.opcode == .leReadLocalSupportedFeatures, response.status.isSuccess,
            response.returnParameters.count >= 8
        else { return nil }
        var mask: UInt64 = 0
        for (index, byte) in response.returnParameters.prefix(8).enumerated() {
            mask |= UInt64(byte) << (8 * UInt64(index))
        }
        rawValue = mask
    }

    /// Whether feature bit `bit` (0…63) is set.
    public func contains(bit: Int) -> Bool {
        (0..<64).contains(bit) && rawValue & (1 << UInt64(bit)) != 0
    }

    /// Whether the controller does Bluetooth 5 extended advertising, and so the extended scan commands.
    public var supportsExtendedAdvertising: Bool { contains(bit: Self.extendedAdvertisingBit) }
}
