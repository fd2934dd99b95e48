import BeaconMeshCore

/// How often the decisions are ticked and what they do per tick, given to `CoordinatorState` as a value (the shell
/// ticks it at `tick`), so that a test can decide with other timings.
struct DecisionTimings: Sendable, Equatable {
    /// How often the engine is ticked (arrival settling, switch dwell, exits, promos) and snapshots are sent.
    var tick: Duration = .milliseconds(50)
    /// Snapshots go out at most this often per store …
    var snapshotMinimum: Duration = .milliseconds(250)
    /// … and at least this often. A tick sends at most a fair share of the stores' snapshots (stores × tick ÷
    /// minimum interval), oldest first, so that a chain's snapshots are spread over time rather than made at once.
    var snapshotRefresh: Duration = .seconds(30)
    /// Open visits are saved as they change (arrive, move, leave); their last-seen times at least this often, a slice of
    /// the members at each tick.
    var visitSave: Duration = .seconds(30)

    /// The coordinator's.
    static let standard = DecisionTimings()
}
