import BeaconMeshCore
import Synchronization

/// Which stores' sightings the dashboard subscribes to for their survey pages: a store's from the first time its page
/// asks for data, until nobody asked for `idle` (a chain's dashboard does not read every store's sightings all day).
final class SightingsListening: Sendable {
    /// How long a store's sightings are kept subscribed after its survey page last asked.
    static let idle: Duration = .seconds(120)

    private let asked = Mutex<[UInt16: Timestamp]>([:])

    /// Notes that `store`'s page asked at `now`: whether to subscribe to its sightings now (it was not), and the
    /// stores to let go of.
    func asked(for store: UInt16, at now: Timestamp) -> (subscribe: Bool, release: [UInt16]) {
        asked.withLock { asked in
            let release = asked.filter { $0.key != store && now - $0.value > Self.idle }.map(\.key).sorted()
            for gone in release { asked[gone] = nil }
            let subscribe = asked[store] == nil
            asked[store] = now
            return (subscribe, release)
        }
    }
}
