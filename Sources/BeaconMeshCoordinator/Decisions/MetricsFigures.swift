import BeaconMeshCore

/// What the coordinator's Prometheus series should now say, as the decisions return it (`CoordinatorActions.metrics`):
/// the shell records it (`CoordinatorMetrics`), so the decisions touch no metrics backend.
struct MetricsFigures: Sendable {
    /// Events published, by type.
    var events: [String: Int] = [:]
    /// The health figures the counters follow, when due.
    var totals: Totals?
    /// What the stores' snapshots made now say.
    var snapshots: [StoreFigures] = []

    /// The totals since start the counters follow.
    struct Totals: Sendable {
        var batches: UInt64
        var sightings: UInt64
        var dropped: [String: UInt64]
        var tracked: Int
    }

    /// One store's figures as its snapshot says them.
    struct StoreFigures: Sendable {
        var store: UInt16
        var members: Int
        var guests: Int
        var nodes: [(department: UInt16, node: String, online: Bool)]
    }

    /// Whether there is nothing to record.
    var isEmpty: Bool { events.isEmpty && totals == nil && snapshots.isEmpty }
}
