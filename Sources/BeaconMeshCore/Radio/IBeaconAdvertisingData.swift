/// The 30-byte legacy advertising data that makes a node broadcast itself as an iBeacon.
///
/// Layout: the Flags AD `02 01 06` (LE General Discoverable, BR/EDR not supported), then the manufacturer AD
/// `1A FF 4C 00 02 15 | uuid (16) | major (2, big-endian) | minor (2, big-endian) | measured power (1)`.
/// `BeaconFrameDecoder` decodes these bytes back to the same iBeacon.
public struct IBeaconAdvertisingData: Hashable, Sendable {
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16
    /// Expected RSSI at 1 m, in dBm.
    public var measuredPower: Int8

    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// The advertising data, exactly 30 bytes (fits the 31-byte legacy limit).
    public var bytes: [UInt8] {
        let flags: [UInt8] = [0x02, AdvertisingDataStructures.flags, 0x06]
        let manufacturerHeader: [UInt8] = [0x1A, AdvertisingDataStructures.manufacturerSpecificData, 0x4C, 0x00, 0x02, 0x15]
        var bytes = flags + manufacturerHeader
        bytes += uuid.bytes
        bytes += [UInt8(major >> 8), UInt8(truncatingIfNeeded: major), UInt8(minor >> 8), UInt8(truncatingIfNeeded: minor)]
        bytes.append(UInt8(bitPattern: measuredPower))
        return bytes
    }
}
