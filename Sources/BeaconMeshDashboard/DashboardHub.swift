import BeaconMeshCore
import BeaconMeshWire
import Metrics
import Synchronization

/// The dashboard's one shared state: the chain board under a lock, and the live pages waiting for its changes.
///
/// Each live page listens to one store or to the whole chain; a change wakes only the pages it concerns. A page's
/// wake-ups are bounded: its stream holds at most one pending wake-up, so a slow page skips to the latest state
/// instead of queueing every change. Records `beaconmesh_dashboard_clients` (live pages connected) and
/// `beaconmesh_dashboard_messages_total` (broker messages received) through swift-metrics.
public final class DashboardHub: Sendable {
    /// What a live page follows.
    public enum Subject: Hashable, Sendable {
        /// The chain overview: woken by any change.
        case chain
        /// One store's page: woken by that store's changes, coordinators' and the broker link's.
        case store(UInt16)
    }

    private struct Listener {
        let subject: Subject
        let continuation: AsyncStream<Void>.Continuation
    }

    private struct State {
        var board: ChainBoard
        var listeners: [Int: Listener] = [:]
        var nextListener = 0
        var closed = false
    }

    private let state: Mutex<State>
    private let clientsGauge = Gauge(label: "beaconmesh_dashboard_clients")
    private let messagesCounter = Counter(label: "beaconmesh_dashboard_messages_total")
    private let droppedCounter = Counter(label: "beaconmesh_dashboard_dropped_total")

    public init(board: ChainBoard) {
        state = Mutex(State(board: board))
        clientsGauge.record(0)
    }

    /// Reads the board under the lock.
    public func read<T>(_ body: (borrowing ChainBoard) -> T) -> T {
        state.withLock { body($0.board) }
    }

    /// Takes one broker message received at `now`, wakes the pages it changed and returns why it was dropped, if it was.
    @discardableResult
    public func receive(topic: String, payload: [UInt8], at now: Timestamp) -> WireError? {
        messagesCounter.increment()
        let (change, dropped) = state.withLock { $0.board.receive(topic: topic, payload: payload, at: now) }
        if dropped != nil { droppedCounter.increment() }
        switch change {
        case .store(let store): wake { $0 == .chain || $0 == .store(store) }
        case .chain: wake { _ in true }
        case .none: break
        }
        return dropped
    }

    /// Takes a change of the broker link at `now` and wakes every page (they show it).
    public func connection(changed connected: Bool, at now: Timestamp) {
        state.withLock { $0.board.connection(changed: connected, at: now) }
        wake { _ in true }
    }

    /// Wakes every page, so it re-renders (fresh "now", faded highlights) and its connection proves alive.
    public func heartbeat() {
        wake { _ in true }
    }

    /// The wake-ups of a page following `subject`: one at once, then one after each change that concerns it. The
    /// stream ends when the hub closes; ending it (the page went away) removes the page.
    public func changes(of subject: Subject) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            let id = state.nextListener
            state.nextListener += 1
            state.listeners[id] = Listener(subject: subject, continuation: continuation)
            clientsGauge.record(state.listeners.count)
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.state.withLock { state in
                state.listeners[id] = nil
                self.clientsGauge.record(state.listeners.count)
            }
        }
        continuation.yield()
        return stream
    }

    /// How many live pages are connected.
    public var connectedPages: Int { state.withLock { $0.listeners.count } }

    /// Ends every page's stream and refuses new ones: the server can then finish its responses and shut down.
    public func close() {
        let continuations = state.withLock { state in
            state.closed = true
            return state.listeners.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }

    private func wake(_ concerns: (Subject) -> Bool) {
        let continuations = state.withLock { state in
            state.listeners.values.filter { concerns($0.subject) }.map(\.continuation)
        }
        for continuation in continuations { continuation.yield() }
    }
}
