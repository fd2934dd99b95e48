/// One decoded beacon frame: what a single AD structure of an advertisement says about the beacon behind it.
///
/// `BeaconFrameDecoder` produces these. Numbers are as on the air (big-endian fields already converted); powers
/// are in dBm. Only iBeacon, AltBeacon and Eddystone-UID frames identify a beacon (`key`).
public enum BeaconFrame: Hashable, Sendable {
    /// Apple iBeacon: manufacturer data of company 0x004C starting `02 15`.
    case iBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16, measuredPower: Int8)
    /// AltBeacon: manufacturer data with beacon code 0xBEAC, any company; `mfgReserved` is `nil` when the AD
    /// structure stops before that byte.
    case altBeacon(company: UInt16, id1: BeaconUUID, id2: UInt16, id3: UInt16, measuredPower: Int8, mfgReserved: UInt8?)
    /// Eddystone-UID (frame type 0x00); `txPower` is the calibrated power at 0 m.
    case eddystoneUID(namespace: EddystoneNamespace, instance: EddystoneInstance, txPower: Int8)
    /// Eddystone-URL (frame type 0x10) with its URL expanded; `txPower` is the calibrated power at 0 m.
    case eddystoneURL(url: String, txPower: Int8)
    /// Eddystone-TLM, unencrypted (frame type 0x20, version 0).
    /// `temperatureCelsius` is `nil` when the beacon sends 0x8000 (no sensor);
    /// `uptimeTenthsOfSeconds` is the raw time-since-power-on counter, in 0.1 s units.
    case eddystoneTLM(
        version: UInt8, batteryMillivolts: UInt16, temperatureCelsius: Double?, advertCount: UInt32,
        uptimeTenthsOfSeconds: UInt32)
    /// Eddystone-TLM, encrypted (frame type 0x20, version 1): 12 encrypted bytes, a salt and an integrity check.
    case eddystoneETLM(encryptedTLM: [UInt8], salt: UInt16, messageIntegrityCheck: UInt16)
    /// Eddystone-EID (frame type 0x30): an 8-byte rotating identifier; `txPower` is the calibrated power at 0 m.
    case eddystoneEID(ephemeralID: UInt64, txPower: Int8)

    /// Eddystone calibrates its power at 0 m; the expected RSSI at 1 m is about 41 dB lower.
    public static let eddystoneZeroToOneMetreLoss = 41

    /// The beacon's canonical identity; `nil` for frames that identify no beacon (URL, TLM, eTLM). An EID frame's is
    /// the id it advertises now (`eddystone-eid:`), which the coordinator resolves.
    public var key: BeaconKey? {
        switch self {
        case .iBeacon(let uuid, let major, let minor, _):
            return .iBeacon(uuid: uuid, major: major, minor: minor)
        case .altBeacon(_, let id1, let id2, let id3, _, _):
            return .altBeacon(id1: id1, id2: id2, id3: id3)
        case .eddystoneUID(let namespace, let instance, _):
            return .eddystone(namespaceHigh: namespace.high, namespaceLow: namespace.low, instance: instance.value)
        case .eddystoneEID(let ephemeralID, _):
            return .eddystoneEID(ephemeralID: ephemeralID)
        case .eddystoneURL, .eddystoneTLM, .eddystoneETLM:
            return nil
        }
    }

    /// The expected RSSI at 1 m in dBm, for distance estimates; `nil` for telemetry frames.
    /// iBeacon and AltBeacon send it directly; Eddystone sends the power at 0 m, converted here by subtracting 41 dB.
    public var measuredPower: Int8? {
        switch self {
        case .iBeacon(_, _, _, let measuredPower), .altBeacon(_, _, _, _, let measuredPower, _):
            return measuredPower
        case .eddystoneUID(_, _, let txPower), .eddystoneURL(_, let txPower), .eddystoneEID(_, let txPower):
            return Int8(max(Int(Int8.min), Int(txPower) - BeaconFrame.eddystoneZeroToOneMetreLoss))
        case .eddystoneTLM, .eddystoneETLM:
            return nil
        }
    }
}
