import Synchronization

/// Presence snapshots on their way from the decisions to the task that makes, encodes and publishes them: the latest
/// one per store (a newer snapshot of a store replaces one not yet taken, so it holds at most one per store).
final class SnapshotMailbox: Sendable {
    private struct State: ~Copyable {
        var waiting: [UInt16: SnapshotSource] = [:]
        var order: [UInt16] = []
        var consumer: CheckedContinuation<[SnapshotSource]?, Never>?
        var closed = false

        mutating func takeAll() -> [SnapshotSource] {
            defer {
                waiting.removeAll(keepingCapacity: true)
                order.removeAll(keepingCapacity: true)
            }
            return order.compactMap { waiting[$0] }
        }
    }

    private let state = Mutex(State())

    /// Hands over snapshots, replacing any of the same store not yet taken.
    func put(_ snapshots: [SnapshotSource]) {
        guard !snapshots.isEmpty else { return }
        let ready: (CheckedContinuation<[SnapshotSource]?, Never>, [SnapshotSource])? = state.withLock { state in
            guard !state.closed else { return nil }
            for snapshot in snapshots {
                if state.waiting.updateValue(snapshot, forKey: snapshot.store.id) == nil { state.order.append(snapshot.store.id) }
            }
            guard let consumer = state.consumer else { return nil }
            state.consumer = nil
            return (consumer, state.takeAll())
        }
        if let (consumer, snapshots) = ready { consumer.resume(returning: snapshots) }
    }

    /// Every snapshot waiting, oldest store first (waits for one); `nil` once closed or when the task is cancelled.
    func next() async -> [SnapshotSource]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[SnapshotSource]?, Never>) in
                let now: [SnapshotSource]?? = state.withLock { state in
                    if state.closed || Task.isCancelled { return .some(nil) }
                    if !state.order.isEmpty { return .some(state.takeAll()) }
                    state.consumer = continuation
                    return .none
                }
                if case .some(let snapshots) = now { continuation.resume(returning: snapshots) }
            }
        } onCancel: {
            close()
        }
    }

    /// Ends the mailbox: a waiting consumer gets `nil`.
    func close() {
        let consumer = state.withLock { state in
            state.closed = true
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume(returning: nil)
    }
}
