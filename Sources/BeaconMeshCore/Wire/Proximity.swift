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

    /// `lhs` is closer than `rhs`.
    public static func < (lhs: Proximity, rhs: Proximity) -> Bool { lhs.rank < rhs.rank }
}
