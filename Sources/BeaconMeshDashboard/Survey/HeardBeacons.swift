import BeaconMeshCore

/// The beacons each store's nodes hear now, for the survey page's list of what a surveyor may be carrying (a pure
/// value: sighting batches and time in, the list out).
///
/// A beacon is listed while a node heard it within `window`, at the loudest of its nodes' readings; a store keeps at
/// most `limit` beacons (the quietest go first: nobody surveys with a beacon the store barely hears). Only the
/// survey page asks, and only for the stores whose sightings the dashboard subscribed to for it.
struct HeardBeacons: Sendable {
    /// How long a beacon stays listed after a node last heard it.
    static let window: Duration = .seconds(10)
    /// The most beacons kept per store.
    static let limit = 200

    /// One beacon as the store hears it now: its loudest node's reading.
    struct Heard: Hashable, Sendable {
        var beacon: BeaconKey
        var rssi: Double
        var node: NodeAddress
        var lastHeard: Timestamp
    }

    private var stores: [UInt16: [BeaconKey: [NodeAddress: (rssi: Double, at: Timestamp)]]] = [:]

    /// Takes what a node heard, received `now` (the node's clock is not trusted: the time is the dashboard's).
    mutating func record(_ batch: SightingBatch, at now: Timestamp) {
        var store = stores[batch.node.store, default: [:]]
        for sighting in batch.sightings where sighting.rssi.isFinite {
            store[sighting.beacon, default: [:]][batch.node] = (sighting.rssi, now)
        }
        for beacon in batch.lost { store[beacon]?[batch.node] = nil }
        Self.prune(&store, at: now)
        stores[batch.node.store] = store
    }

    /// The beacons `store` hears now, loudest first (ties by key).
    func heard(store: UInt16, at now: Timestamp) -> [Heard] {
        guard let store = stores[store] else { return [] }
        return Self.listed(store, at: now)
    }

    private static func listed(_ store: [BeaconKey: [NodeAddress: (rssi: Double, at: Timestamp)]], at now: Timestamp) -> [Heard] {
        store.compactMap { beacon, nodes -> Heard? in
            let recent = nodes.filter { now - $0.value.at <= window }
            guard let loudest = recent.max(by: { ($0.value.rssi, $1.key.node) < ($1.value.rssi, $0.key.node) }) else { return nil }
            return Heard(
                beacon: beacon, rssi: loudest.value.rssi, node: loudest.key, lastHeard: recent.values.map(\.at).max() ?? loudest.value.at)
        }
        .sorted { ($1.rssi, $0.beacon.description) < ($0.rssi, $1.beacon.description) }
    }

    /// Forgets readings older than the window, and the quietest beacons over the limit.
    private static func prune(_ store: inout [BeaconKey: [NodeAddress: (rssi: Double, at: Timestamp)]], at now: Timestamp) {
        for (beacon, nodes) in store {
            let recent = nodes.filter { now - $0.value.at <= window }
            store[beacon] = recent.isEmpty ? nil : recent
        }
        guard store.count > limit else { return }
        for heard in listed(store, at: now).dropFirst(limit) { store[heard.beacon] = nil }
    }
}
