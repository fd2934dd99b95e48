/// Finds the beacon frames (iBeacon, AltBeacon, Eddystone) in one advertisement's AD data; anything else is ignored.
///
/// Each AD structure yields at most one frame, so one advertisement can carry several (the captures' golden files
/// have one line per frame). The rules, matching the team's reference decoder:
/// - iBeacon: AD 0xFF, company 0x004C, data starting `02 15`, at least 23 bytes after the company id;
/// - AltBeacon: AD 0xFF, any company, beacon code `BE AC`, at least 25 payload bytes (the mfg-reserved byte after
///   them is optional);
/// - Eddystone: AD 0x16 (service data) for UUID 0xFEAA, frame types UID, URL, TLM, eTLM and EID (minimum sizes at
///   `eddystoneFrame(in:)`); an unknown frame type, or a frame cut short by its AD length, yields nothing.
///
/// `forEachFrame(inAdvertisingData:_:)` does not allocate for iBeacon, AltBeacon, Eddystone-UID, TLM and EID frames.
public enum BeaconFrameDecoder {
    /// Apple's Bluetooth company identifier.
    public static let appleCompanyID: UInt16 = 0x004C
    /// The Eddystone 16-bit service UUID.
    public static let eddystoneServiceUUID: UInt16 = 0xFEAA

    /// Calls `body` with each beacon frame in `data` (a run of AD structures), in order; returns how many AD
    /// structures were beacon frames of a known kind with the wrong length (`isMalformedFrame`), dropped.
    @discardableResult
    public static func forEachFrame(inAdvertisingData data: UnsafeRawBufferPointer, _ body: (BeaconFrame) -> Void) -> Int {
        var malformed = 0
        AdvertisingDataStructures.forEach(in: data) { type, payload in
            if let frame = frame(adType: type, payload: payload) {
                body(frame)
            } else if isMalformedFrame(adType: type, payload: payload) {
                malformed += 1
            }
        }
        return malformed
    }

    /// All beacon frames in `data` (a run of AD structures), in order.
    public static func frames(inAdvertisingData data: [UInt8]) -> [BeaconFrame] {
        data.withUnsafeBytes { bytes in
            var frames: [BeaconFrame] = []
            forEachFrame(inAdvertisingData: bytes) { frames.append($0) }
            return frames
        }
    }

    /// The beacon frame in one AD structure (its type and the payload after the type), or `nil`.
    public static func frame(adType: UInt8, payload: UnsafeRawBufferPointer) -> BeaconFrame? {
        switch adType {
        case AdvertisingDataStructures.manufacturerSpecificData:
            return iBeaconFrame(in: payload) ?? altBeaconFrame(in: payload)
        case AdvertisingDataStructures.serviceData16:
            return eddystoneFrame(in: payload)
        default:
            return nil
        }
    }

    /// iBeacon manufacturer data: `4C 00 | 02 15 | uuid (16) | major (2) | minor (2) | measured power (1)`.
    static func iBeaconFrame(in payload: UnsafeRawBufferPointer) -> BeaconFrame? {
        guard payload.count >= 25, littleEndian16(payload, 0) == appleCompanyID, payload[2] == 0x02, payload[3] == 0x15
        else { return nil }
        return .iBeacon(
            uuid: BeaconUUID(bytes: payload, offset: 4),
            major: bigEndian16(payload, 20),
            minor: bigEndian16(payload, 22),
            measuredPower: Int8(bitPattern: payload[24]))
    }

    /// AltBeacon manufacturer data:
    /// `company (2, little-endian) | BE AC | id1 (16) | id2 (2) | id3 (2) | measured power (1) [| mfg reserved (1)]`.
    static func altBeaconFrame(in payload: UnsafeRawBufferPointer) -> BeaconFrame? {
        guard payload.count >= 25, payload[2] == 0xBE, payload[3] == 0xAC else { return nil }
        return .altBeacon(
            company: littleEndian16(payload, 0),
            id1: BeaconUUID(bytes: payload, offset: 4),
            id2: bigEndian16(payload, 20),
            id3: bigEndian16(payload, 22),
            measuredPower: Int8(bitPattern: payload[24]),
            mfgReserved: payload.count > 25 ? payload[25] : nil)
    }

    /// Eddystone service data: `AA FE | frame type | …`. Minimum payload sizes (including UUID and frame type):
    /// UID 20 (`tx, namespace 10, instance 6`, RFU optional), URL 5 (`tx, scheme, encoded URL…`),
    /// TLM version 0: 16 (`version, battery 2, temperature 2, advert count 4, uptime 4`),
    /// TLM version 1 (eTLM): 20 (`version, encrypted 12, salt 2, MIC 2`); EID exactly 12 (`tx, EID 8`: Google's
    /// specification has no optional bytes, so a longer or shorter one is malformed, see `isMalformedFrame`).
    static func eddystoneFrame(in payload: UnsafeRawBufferPointer) -> BeaconFrame? {
        guard payload.count >= 4, littleEndian16(payload, 0) == eddystoneServiceUUID else { return nil }
        switch payload[2] {
        case 0x00 where payload.count >= 20:
            return .eddystoneUID(
                namespace: EddystoneNamespace(bytes: payload, offset: 4),
                instance: EddystoneInstance(bytes: payload, offset: 14),
                txPower: Int8(bitPattern: payload[3]))
        case 0x10 where payload.count >= 5:
            guard
                let url = EddystoneURL.expand(
                    scheme: payload[4], encoded: UnsafeRawBufferPointer(rebasing: payload[5...]))
            else { return nil }
            return .eddystoneURL(url: url, txPower: Int8(bitPattern: payload[3]))
        case 0x20 where payload[3] == 0x00 && payload.count >= 16:
            let temperature = bigEndian16(payload, 6)
            return .eddystoneTLM(
                version: 0,
                batteryMillivolts: bigEndian16(payload, 4),
                temperatureCelsius: temperature == 0x8000 ? nil : Double(Int16(bitPattern: temperature)) / 256,
                advertCount: bigEndian32(payload, 8),
                uptimeTenthsOfSeconds: bigEndian32(payload, 12))
        case 0x20 where payload[3] == 0x01 && payload.count >= 20:
            return .eddystoneETLM(
                encryptedTLM: Array(payload[4..<16]),
                salt: bigEndian16(payload, 16),
                messageIntegrityCheck: bigEndian16(payload, 18))
        case 0x30 where payload.count == 12:
            var ephemeralID: UInt64 = 0
            for index in 4..<12 { ephemeralID = ephemeralID << 8 | UInt64(payload[index]) }
            return .eddystoneEID(ephemeralID: ephemeralID, txPower: Int8(bitPattern: payload[3]))
        default:
            return nil
        }
    }

    /// Whether one AD structure that yielded no frame is a beacon frame of a known kind with the wrong length (an
    /// Eddystone-EID frame not of exactly 12 bytes): the scanner drops and counts those.
    public static func isMalformedFrame(adType: UInt8, payload: UnsafeRawBufferPointer) -> Bool {
        adType == AdvertisingDataStructures.serviceData16 && payload.count >= 3
            && littleEndian16(payload, 0) == eddystoneServiceUUID && payload[2] == 0x30 && payload.count != 12
    }

    // The caller guarantees the bytes exist.
    private static func littleEndian16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private static func bigEndian16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian16(bytes, offset)) << 16 | UInt32(bigEndian16(bytes, offset + 2))
    }
}
