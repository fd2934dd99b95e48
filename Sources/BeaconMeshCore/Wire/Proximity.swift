/// How close a beacon is, in the iBeacon convention's buckets; ordered from closest to unknown.
public enum Proximity: String, Comparable, Sendable, CaseIterable {
    case immediate
    case near
    case far
    case unknown

    private var rank: Int {
        switch self {
        case .immediate: return 0
        case .near: return 1
        case .far: return 2
        case .unknown: return 3
        }
    }

    /// The proximity whose raw value `utf8` spells (a decoder's bytes, read without making a `String`); `nil` for
    /// anything else.
    public init?(utf8: UnsafeBufferPointer<UInt8>) {
        switch utf8.count {
        case 9 where utf8.elementsEqual("immediate".utf8): self = .immediate
        case 4 where utf8.elementsEqual("near".utf8): self = .near
        case 3 where utf8.elementsEqual("far".utf8): self = .far
        case 7 where utf8.elementsEqual("unknown".utf8): self = .unknown
        default: return nil
        }
    }

    /// `lhs` is closer than `rhs`.
    public static func < (lhs: Proximity, rhs: Proximity) -> Bool { lhs.rank < rhs.rank }
}
