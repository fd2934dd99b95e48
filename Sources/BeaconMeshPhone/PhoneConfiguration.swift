import BeaconMeshCore
import BeaconMeshService

/// Everything a simulated member's phone runs with: whose phone it is, which store it walks, how, and the broker.
public struct PhoneConfiguration: Sendable, Equatable {
    /// The member whose app this is: the `{member}` of its topics and the `member` of its reports.
    public var member: String
    /// The store whose department beacons it ranges.
    public var store: UInt16
    /// The walk through the store: route, dwell per department, and whether it comes back.
    public var walk: PhoneWalk
    /// How often the app publishes a ranging report while it ranges the store (about 1 Hz, as iOS ranges).
    public var reportInterval: Duration = .seconds(1)
    /// How far the phone's clock is off (added to the real time in `sentAt`; may be negative).
    public var clockOffset: Duration = .zero
    public var broker: BrokerConnection
    /// The first level of every topic.
    public var topicRoot = Topics.defaultRoot

    /// The route the phone walks when none is given: the demo store's three departments.
    public static let defaultRoute: [UInt16] = [10, 20, 30]
    /// How long it stays in each department when no dwell is given.
    public static let defaultDwell: Duration = .seconds(20)

    public init(member: String, store: UInt16, walk: PhoneWalk, broker: BrokerConnection) {
        self.member = member
        self.store = store
        self.walk = walk
        self.broker = broker
    }

    /// Whether `id` can be a member id in a topic (and a broker user name): 1–64 of `A-Z a-z 0-9 . _ -`.
    public static func isValidMemberID(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                    || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
            }
    }
}
