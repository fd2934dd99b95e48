import BeaconMeshThreads

/// Presence snapshots on their way from the decisions to the task that makes, encodes and publishes them, in a
/// `Mailbox`: the latest one per store (a newer snapshot of a store replaces one not yet taken, so it holds at most
/// one per store).
typealias SnapshotMailbox = Mailbox<LatestSnapshots>

extension Mailbox where Contents == LatestSnapshots {
    /// An empty mailbox.
    convenience init() {
        self.init(LatestSnapshots())
    }

    /// Hands over snapshots, replacing any of the same store not yet taken.
    func put(_ snapshots: [SnapshotSource]) {
        guard !snapshots.isEmpty else { return }
        put { $0.replace(with: snapshots) }
    }

    /// Every snapshot waiting, oldest store first (waits for one); `nil` once closed or when the task is cancelled.
    func next() async -> [SnapshotSource]? {
        await take { $0.takeAll() }
    }
}

/// The latest snapshot of each store not yet taken, in the order the stores first came; never full (one per store).
struct LatestSnapshots: MailboxContents {
    private var waiting: [UInt16: SnapshotSource] = [:]
    private var order: [UInt16] = []

    var isFull: Bool { false }

    /// Keeps `snapshots`, each replacing a waiting one of its store.
    mutating func replace(with snapshots: [SnapshotSource]) {
        for snapshot in snapshots where waiting.updateValue(snapshot, forKey: snapshot.store.id) == nil {
            order.append(snapshot.store.id)
        }
    }

    /// Every snapshot waiting, oldest store first, removed; `nil` if none waits.
    mutating func takeAll() -> [SnapshotSource]? {
        guard !order.isEmpty else { return nil }
        defer {
            waiting.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
        }
        return order.compactMap { waiting[$0] }
    }
}
