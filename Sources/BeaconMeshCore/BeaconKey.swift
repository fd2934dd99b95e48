/// The identity of one beacon, spelled on the wire as the contract's canonical key
/// (`ibeacon:<uuid>:<major>:<minor>`, `altbeacon:<id1>:<id2>:<id3>`, `eddystone:<namespace>:<instance>`).
///
/// A value type of plain integers: hashing it on the scanner's hot path never allocates.
public enum BeaconKey: Hashable, Comparable, Sendable {
    case iBeacon(uuid: BeaconUUID, major: UInt16, minor: UInt16)
    case altBeacon(id1: BeaconUUID, id2: UInt16, id3: UInt16)
    /// Eddystone-UID: a 10-byte namespace (`namespaceHigh` holds its first 8 bytes) and a 6-byte instance.
    case eddystone(namespaceHigh: UInt64, namespaceLow: UInt16, instance: UInt64)

    /// Parses a canonical key; `nil` if `text` is not one (wrong scheme, bad hex, number out of range).
    public init?(_ text: some StringProtocol) {
        let parts = String(text).split(separator: ":", omittingEmptySubsequences: false)
        switch parts.first {
        case "ibeacon"?, "altbeacon"?:
            guard parts.count == 4, let uuid = BeaconUUID(parts[1]),
                  let first = BeaconKey.number(parts[2]), let second = BeaconKey.number(parts[3])
            else { return nil }
            self = parts[0] == "ibeacon"
                ? .iBeacon(uuid: uuid, major: first, minor: second)
                : .altBeacon(id1: uuid, id2: first, id3: second)
        case "eddystone"?:
            guard parts.count == 3, parts[1].utf8.count == 20, parts[2].utf8.count == 12,
                  let namespace = HexDigits.bytes(parts[1]), let instance = HexDigits.bytes(parts[2])
            else { return nil }
            self = .eddystone(
                namespaceHigh: namespace[0..<8].reduce(0) { $0 << 8 | UInt64($1) },
                namespaceLow: namespace[8..<10].reduce(0) { $0 << 8 | UInt16($1) },
                instance: instance.reduce(0) { $0 << 8 | UInt64($1) })
        default:
            return nil
        }
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
        }
    }

    /// The iBeacon UUID, for allowlists; `nil` for other kinds.
    public var iBeaconUUID: BeaconUUID? {
        if case .iBeacon(let uuid, _, _) = self { return uuid }
        return nil
    }

    private static func number(_ text: Substring) -> UInt16? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt16(text)
    }

    /// Orders by kind (AltBeacon, Eddystone, iBeacon), then by identifiers as numbers — cheap, no strings built.
    public static func < (lhs: BeaconKey, rhs: BeaconKey) -> Bool {
        switch (lhs, rhs) {
        case (.altBeacon(let a1, let a2, let a3), .altBeacon(let b1, let b2, let b3)):
            return (a1.high, a1.low, a2, a3) < (b1.high, b1.low, b2, b3)
        case (.eddystone(let a1, let a2, let a3), .eddystone(let b1, let b2, let b3)):
            return (a1, a2, a3) < (b1, b2, b3)
        case (.iBeacon(let a1, let a2, let a3), .iBeacon(let b1, let b2, let b3)):
            return (a1.high, a1.low, a2, a3) < (b1.high, b1.low, b2, b3)
        default:
            return lhs.kindRank < rhs.kindRank
        }
    }

    private var kindRank: Int {
        switch self {
        case .altBeacon: return 0
        case .eddystone: return 1
        case .iBeacon: return 2
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
        }
    }
}
