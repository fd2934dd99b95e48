/// The identity of one beacon, spelled on the wire as the contract's canonical key
/// (`ibeacon:<uuid>:<major>:<minor>`, `altbeacon:<id1>:<id2>:<id3>`, `eddystone:<namespace>:<instance>`,
/// `eddystone-eid:<ephemeral id>`).
///
/// A value type of plain integers: hashing it on the scanner's hot path never allocates.
public enum BeaconKey: Hashable, Comparable, Sendable {
    case iBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16)
    case altBeacon(id1: BeaconUUID, id2: UInt16, id3: UInt16)
    /// Eddystone-UID: a 10-byte namespace (`namespaceHigh` holds its first 8 bytes) and a 6-byte instance.
    case eddystone(namespaceHigh: UInt64, namespaceLow: UInt16, instance: UInt64)
    /// Eddystone-EID: the 8-byte ephemeral id a fob advertises now (it rotates every 2^K seconds; only the
    /// coordinator, holding the members' identity keys, knows whose it is).
    case eddystoneEID(ephemeralID: UInt64)

    /// Whether the key is a rotating id (Eddystone-EID): the same person's fob advertises another one every 2^K seconds.
    public var rotates: Bool {
        if case .eddystoneEID = self { return true }
        return false
    }

    /// Parses a canonical key; `nil` if `text` is not one (wrong scheme, bad hex, number out of range).
    public init?(_ text: some StringProtocol) {
        var copy = String(text)
        guard let key = copy.withUTF8({ BeaconKey(utf8: $0) }) else { return nil }
        self = key
    }

    /// Parses a canonical key from its UTF-8 bytes without building strings (the coordinator reads thousands a
    /// second).
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        func hasPrefix(_ prefix: StaticString) -> Bool {
            prefix.withUTF8Buffer { expected in bytes.count > expected.count && bytes.starts(with: expected) }
        }
        if hasPrefix("ibeacon:") || hasPrefix("altbeacon:") {
            let isIBeacon = bytes[0] == UInt8(ascii: "i")
            let start = isIBeacon ? 8 : 10
            guard bytes.count > start + 36, let uuid = BeaconUUID(utf8: UnsafeBufferPointer(rebasing: bytes[start..<(start + 36)])),
                bytes[start + 36] == UInt8(ascii: ":")
            else { return nil }
            let rest = UnsafeBufferPointer(rebasing: bytes[(start + 37)...])
            guard let colon = rest.firstIndex(of: UInt8(ascii: ":")),
                let first = BeaconKey.number(UnsafeBufferPointer(rebasing: rest[..<colon])),
                let second = BeaconKey.number(UnsafeBufferPointer(rebasing: rest[(colon + 1)...]))
            else { return nil }
            self = isIBeacon ? .iBeacon(uuid: uuid, major: first, minor: second) : .altBeacon(id1: uuid, id2: first, id3: second)
        } else if hasPrefix("eddystone:") {
            guard bytes.count == 10 + 20 + 1 + 12, bytes[30] == UInt8(ascii: ":"),
                let namespaceHigh = BeaconKey.hex(UnsafeBufferPointer(rebasing: bytes[10..<26])),
                let namespaceLow = BeaconKey.hex(UnsafeBufferPointer(rebasing: bytes[26..<30])),
                let instance = BeaconKey.hex(UnsafeBufferPointer(rebasing: bytes[31..<43]))
            else { return nil }
            self = .eddystone(namespaceHigh: namespaceHigh, namespaceLow: UInt16(namespaceLow), instance: instance)
        } else if hasPrefix("eddystone-eid:") {
            guard bytes.count == 14 + 16, let ephemeralID = BeaconKey.hex(UnsafeBufferPointer(rebasing: bytes[14...])) else {
                return nil
            }
            self = .eddystoneEID(ephemeralID: ephemeralID)
        } else {
            return nil
        }
    }

    /// 1 to 5 decimal digits with a value up to 65535.
    private static func number(_ digits: UnsafeBufferPointer<UInt8>) -> UInt16? {
        guard (1...5).contains(digits.count) else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value <= 65535 ? UInt16(value) : nil
    }

    /// Up to 16 hex digits (either case).
    private static func hex(_ digits: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for digit in digits {
            guard let nibble = HexDigits.value(of: digit) else { return nil }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }

    /// Hashes two words per key (the scanner hashes a key for every advert it hears).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .iBeacon(let uuid, let major, let minor):
            hasher.combine(uuid.high)
            hasher.combine(uuid.low ^ (UInt64(major) << 16 | UInt64(minor)) &* 0x9E37_79B9_7F4A_7C15)
        case .altBeacon(let id1, let id2, let id3):
            hasher.combine(id1.high ^ 0xA17B_EAC0)
            hasher.combine(id1.low ^ (UInt64(id2) << 16 | UInt64(id3)) &* 0x9E37_79B9_7F4A_7C15)
        case .eddystone(let namespaceHigh, let namespaceLow, let instance):
            hasher.combine(namespaceHigh ^ 0xEDD1_5707)
            hasher.combine(instance ^ UInt64(namespaceLow) << 48)
        case .eddystoneEID(let ephemeralID):
            hasher.combine(ephemeralID ^ 0xE1D0_0000_E1D0)
        }
    }

    /// Orders by kind (AltBeacon, Eddystone, Eddystone-EID, iBeacon: as their keys sort), then by identifiers as numbers — cheap, no strings built.
    public static func < (lhs: BeaconKey, rhs: BeaconKey) -> Bool {
        switch (lhs, rhs) {
        case (.altBeacon(let a1, let a2, let a3), .altBeacon(let b1, let b2, let b3)):
            return (a1.high, a1.low, a2, a3) < (b1.high, b1.low, b2, b3)
        case (.eddystone(let a1, let a2, let a3), .eddystone(let b1, let b2, let b3)):
            return (a1, a2, a3) < (b1, b2, b3)
        case (.iBeacon(let a1, let a2, let a3), .iBeacon(let b1, let b2, let b3)):
            return (a1.high, a1.low, a2, a3) < (b1.high, b1.low, b2, b3)
        case (.eddystoneEID(let a), .eddystoneEID(let b)):
            return a < b
        default:
            return lhs.kindRank < rhs.kindRank
        }
    }

    private var kindRank: Int {
        switch self {
        case .altBeacon: return 0
        case .eddystone: return 1
        case .eddystoneEID: return 2
        case .iBeacon: return 3
        }
    }
}

extension BeaconKey: CustomStringConvertible {
    /// The canonical key, lower-case hex.
    public var description: String {
        switch self {
        case .iBeacon(let uuid, let major, let minor):
            return "ibeacon:\(uuid):\(major):\(minor)"
        case .altBeacon(let id1, let id2, let id3):
            return "altbeacon:\(id1):\(id2):\(id3)"
        case .eddystone(let namespaceHigh, let namespaceLow, let instance):
            return "eddystone:" + HexDigits.string(namespaceHigh, digits: 16) + HexDigits.string(UInt64(namespaceLow), digits: 4)
                + ":" + HexDigits.string(instance, digits: 12)
        case .eddystoneEID(let ephemeralID):
            return "eddystone-eid:" + HexDigits.string(ephemeralID, digits: 16)
        }
    }
}
