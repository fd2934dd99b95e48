/// What a member's phone app ranges in one store, published on `stores/{store}/members/{member}/ranging`: the
/// contract's ranging report. The store's department nodes advertise the chain's iBeacon with major = store and
/// minor = department; the phone reports the departments it ranges now.
public struct RangingReport: Hashable, Sendable {
    /// One department beacon as the phone ranges it.
    public struct RangedBeacon: Hashable, Sendable {
        public var department: UInt16
        public var proximity: Proximity
        /// dBm, if the phone gave one.
        public var rssi: Double?
        /// Metres (CoreLocation's word), if the phone gave one.
        public var accuracy: Double?

        public init(department: UInt16, proximity: Proximity, rssi: Double?, accuracy: Double?) {
            self.department = department
            self.proximity = proximity
            self.rssi = rssi
            self.accuracy = accuracy
        }

        /// The signal to compare departments by: the RSSI, or one typical of the proximity when the phone gave none.
        public var signal: Double {
            if let rssi { return rssi }
            switch proximity {
            case .immediate: return -50
            case .near: return -65
            case .far: return -80
            case .unknown: return -95
            }
        }
    }

    public var member: String
    /// Random id drawn at each app start.
    public var session: String
    /// 1 for the first report of a session, then +1 per report.
    public var seq: UInt64
    /// The phone's clock: it orders and spaces the phone's own reports only.
    public var sentAt: Timestamp
    /// The department beacons ranged now; empty when the phone ranges none of this store's.
    public var beacons: [RangedBeacon]

    public init(member: String, session: String, seq: UInt64, sentAt: Timestamp, beacons: [RangedBeacon]) {
        self.member = member
        self.session = session
        self.seq = seq
        self.sentAt = sentAt
        self.beacons = beacons
    }
}
