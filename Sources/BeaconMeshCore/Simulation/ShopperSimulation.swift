/// Simulated shoppers walking a store's departments, as one department's node would hear their phones.
///
/// Every shopper follows the same loop — each department of `route` for `stay`, then `outside` away from the
/// store — offset from the others, and all of it is a function of the time alone: separate scanner processes agree
/// on where everybody is without talking to each other. A phone is heard strongly (about −58 dBm) in its department,
/// faintly (about −82 dBm) from the neighbouring ones, and not at all farther away or outside the store.
public struct ShopperSimulation: Sendable {
    /// One simulated phone.
    public struct Shopper: Sendable, Hashable {
        public var beacon: IBeaconAdvertisingData
        public var address: BluetoothAddress

        public init(beacon: IBeaconAdvertisingData, address: BluetoothAddress) {
            self.beacon = beacon
            self.address = address
        }
    }

    public var route: [UInt16]
    public var shoppers: [Shopper]
    public var stay: Duration
    public var outside: Duration

    public init(route: [UInt16], shoppers: [Shopper], stay: Duration = .seconds(20), outside: Duration = .seconds(60)) {
        self.route = route
        self.shoppers = shoppers
        self.stay = stay
        self.outside = outside
    }

    /// The demo's shoppers: store-app phones `ibeacon:0cf052c2-97ca-407c-84f8-b62aac4e9020:<store>:<n>`,
    /// minors 1–5 for the demo members and 101–103 for guests.
    public static func demoShoppers(store: UInt16) -> [Shopper] {
        let uuid = BeaconUUID(high: 0x0CF0_52C2_97CA_407C, low: 0x84F8_B62A_AC4E_9020)
        return ([1, 2, 3, 4, 5, 101, 102, 103] as [UInt16]).map { minor in
            Shopper(
                beacon: IBeaconAdvertisingData(uuid: uuid, major: store, minor: minor, measuredPower: -59),
                address: BluetoothAddress(value: 0xC0FFEE_000000 | UInt64(store) << 16 | UInt64(minor)))
        }
    }

    private var cycle: Duration { stay * route.count + outside }

    /// Where shopper `index` is at `time`: a department of the route, or `nil` outside the store.
    public func location(ofShopper index: Int, at time: Timestamp) -> UInt16? {
        guard !route.isEmpty, index < shoppers.count else { return nil }
        let cycleMilliseconds = cycle.wholeMilliseconds
        let offset = cycleMilliseconds * Int64(index) / Int64(max(shoppers.count, 1))
        let position = (time.milliseconds + offset) % cycleMilliseconds
        let step = Int(position / stay.wholeMilliseconds)
        return step < route.count ? route[step] : nil
    }

    /// The RSSI at which `department`'s node hears shopper `index` at `time` (with up to ±`jitter` dB of noise
    /// from `random`), or `nil` when it does not hear them.
    public func rssi(
        ofShopper index: Int, heardBy department: UInt16, at time: Timestamp,
        jitter: Int = 3, random: inout some RandomNumberGenerator
    ) -> Int8? {
        guard let location = location(ofShopper: index, at: time),
            let here = route.firstIndex(of: department), let there = route.firstIndex(of: location)
        else { return nil }
        let base: Int
        switch abs(here - there) {
        case 0: base = -58
        case 1: base = -82
        default: return nil
        }
        return Int8(base + Int.random(in: -jitter...jitter, using: &random))
    }
}
