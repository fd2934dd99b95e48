import Metrics

/// The coordinator's series for Prometheus (the contract's `metrics:` key), recorded through swift-metrics: counters
/// `beaconmesh_batches_total`, `beaconmesh_sightings_total`, `beaconmesh_events_total{type}`,
/// `beaconmesh_dropped_total{reason}`; gauges `beaconmesh_members_present{store}`, `beaconmesh_tracked_beacons`; and,
/// for alerts, `beaconmesh_guests_present{store}` and `beaconmesh_node_online{store,department,node}` (1 or 0).
///
/// The decisions say what the series should say (`MetricsFigures`, an action); the shell records it here. Events are
/// counted as they are published; batches, sightings, drops and tracked beacons are brought up to the state's own
/// health figures at most every `interval` (counters grow by the difference), so the hot path of a sighting batch
/// records nothing. Without a bootstrapped metrics backend every record is a no-op.
struct CoordinatorMetrics {
    /// Records what the decisions said.
    mutating func record(_ figures: MetricsFigures) {
        for (type, count) in figures.events { countEvents(type: type, count: count) }
        if let totals = figures.totals {
            update(batches: totals.batches, sightings: totals.sightings, dropped: totals.dropped, tracked: totals.tracked)
        }
        for store in figures.snapshots {
            snapshot(store: store.store, members: store.members, guests: store.guests, nodes: store.nodes)
        }
    }

    /// How often the counters follow the health figures.
    static let interval: Duration = .seconds(1)

    private let batches = Counter(label: "beaconmesh_batches_total")
    private let sightings = Counter(label: "beaconmesh_sightings_total")
    private let tracked = Gauge(label: "beaconmesh_tracked_beacons")
    private var events: [String: Counter] = [:]
    private var dropped: [String: Counter] = [:]
    private var present: [UInt16: Gauge] = [:]
    private var guests: [UInt16: Gauge] = [:]
    private var nodes: [NodeKey: Gauge] = [:]
    private var reportedBatches: UInt64 = 0
    /// A node's gauge, found without building its label text at every snapshot.
    private struct NodeKey: Hashable {
        var store: UInt16
        var department: UInt16
        var node: String
    }
    private var reportedSightings: UInt64 = 0
    private var reportedDrops: [String: UInt64] = [:]

    /// Counts `count` published events of `type` (`arrived`, `moved`, `left`, `promo`, `node`, …).
    mutating func countEvents(type: String, count: Int) {
        let counter = events[type] ?? Counter(label: "beaconmesh_events_total", dimensions: [("type", type)])
        events[type] = counter
        counter.increment(by: Int64(count))
    }

    /// Brings the counters up to the state's totals and sets the tracked-beacons gauge.
    mutating func update(
        batches totalBatches: UInt64, sightings totalSightings: UInt64, dropped drops: [String: UInt64], tracked beacons: Int
    ) {
        if totalBatches > reportedBatches {
            batches.increment(by: Int64(totalBatches - reportedBatches))
            reportedBatches = totalBatches
        }
        if totalSightings > reportedSightings {
            sightings.increment(by: Int64(totalSightings - reportedSightings))
            reportedSightings = totalSightings
        }
        for (reason, total) in drops where total > reportedDrops[reason, default: 0] {
            let counter = dropped[reason] ?? Counter(label: "beaconmesh_dropped_total", dimensions: [("reason", reason)])
            dropped[reason] = counter
            counter.increment(by: Int64(total - reportedDrops[reason, default: 0]))
            reportedDrops[reason] = total
        }
        tracked.record(beacons)
    }

    /// Sets what `store`'s latest snapshot says: members and guests present, and each node online (1) or not (0).
    mutating func snapshot(
        store: UInt16, members: Int, guests guestCount: Int,
        nodes states: [(department: UInt16, node: String, online: Bool)]
    ) {
        let label = String(store)
        let membersGauge = present[store] ?? Gauge(label: "beaconmesh_members_present", dimensions: [("store", label)])
        present[store] = membersGauge
        membersGauge.record(members)
        let guestsGauge = guests[store] ?? Gauge(label: "beaconmesh_guests_present", dimensions: [("store", label)])
        guests[store] = guestsGauge
        guestsGauge.record(guestCount)
        for state in states {
            let key = NodeKey(store: store, department: state.department, node: state.node)
            let gauge =
                nodes[key]
                ?? Gauge(
                    label: "beaconmesh_node_online",
                    dimensions: [
                        ("store", label), ("department", String(state.department)), ("node", state.node),
                    ])
            nodes[key] = gauge
            gauge.record(state.online ? 1 : 0)
        }
    }
}
