import BeaconMeshCore
import BeaconMeshRegistry
import Synchronization

/// Whether the registry answers the coordinator's reads, so that health says the database is failing also while
/// nothing is written (an idle coordinator's writer never notices). The poll tells it when a read starts, answers or
/// fails; a read still waiting after `patience` counts as failing: behind a cut network line a query only times out
/// after the registry's own timeout (10 s), and health must say so sooner.
final class RegistryReachability: Sendable {
    /// How long a read may take before the database counts as not answering.
    static let patience: Duration = .seconds(5)

    private struct State {
        var waitingSince: (instant: ContinuousClock.Instant, time: Timestamp)?
        var failure: String?
        var failingSince: Timestamp?
        /// The coordinator started without the database (from its local cache), and has not read it since.
        var startedWithout: (note: String, at: Timestamp)?
    }

    private let state = Mutex(State())
    private let location: String
    private let clock: @Sendable () -> Timestamp

    /// For the registry at `location` (named in what health says), with `clock` the coordinator's.
    init(location: String, clock: @escaping @Sendable () -> Timestamp) {
        self.location = location
        self.clock = clock
    }

    /// A read starts (not the wait for the change feed's next announcement, which may rightly last).
    func reading() {
        let time = clock()
        state.withLock { $0.waitingSince = (.now, time) }
    }

    /// The coordinator started without reading the registry (`note` says how and why): failing until a read answers.
    func startedWithout(_ note: String, at time: Timestamp) {
        state.withLock { $0.startedWithout = (note, time) }
    }

    /// The reads answered.
    func answered() {
        state.withLock { $0 = State() }
    }

    /// A read failed with `cause`.
    func failed(_ cause: String) {
        let time = clock()
        state.withLock { state in
            state.failingSince = state.failingSince ?? state.waitingSince?.time ?? time
            state.waitingSince = nil
            state.failure = cause
        }
    }

    /// The writer's `status`, failing also when the reads fail or wait longer than `patience` (the writer's own
    /// failure, if any, comes first).
    func merged(with status: RegistryWriter.Status) -> RegistryWriter.Status {
        guard status.failure == nil else { return status }
        return state.withLock { state in
            var merged = status
            if let failure = state.failure {
                merged.failure = "\(location): \(failure)" + (state.startedWithout.map { " (\($0.note))" } ?? "")
                merged.failingSince = state.startedWithout?.at ?? state.failingSince
            } else if let start = state.startedWithout {
                merged.failure = "\(location): \(start.note)"
                merged.failingSince = start.at
            } else if let waiting = state.waitingSince, ContinuousClock.now - waiting.instant >= Self.patience {
                let seconds = (ContinuousClock.now - waiting.instant).components.seconds
                merged.failure = "\(location): the database has not answered for \(seconds) s"
                merged.failingSince = waiting.time
            }
            return merged
        }
    }
}
