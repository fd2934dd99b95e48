import BeaconMeshCore

/// Everything the dashboard knows of one store: the monitor's model of it, plus what a web page shows beside it
/// (recent events, nodes as their status topics say, the retained snapshot's bytes for the API, when it was last heard).
///
/// A pure value like `MonitorModel`: every change takes the time it happened.
public struct StoreBoard: Sendable {
    /// How many events the page's "recent events" list keeps.
    public static let recentEventLimit = 15
    /// How many alerts the page's "alerts" panel keeps.
    public static let recentAlertLimit = 10
    /// A store that sent nothing for this long is "quiet": the coordinator republishes every snapshot every 30 s,
    /// so two missed republishes mean the coordinator or the store's link is gone.
    public static let quietAfter: Duration = .seconds(75)

    /// The store's model, read the same way as the terminal monitor reads it.
    public private(set) var model: MonitorModel
    /// The last events of the store, newest first, at most `recentEventLimit`.
    public private(set) var recentEvents: [StoreEvent] = []
    /// The store's last alerts, newest first, at most `recentAlertLimit`.
    public private(set) var recentAlerts: [Alert] = []
    /// The retained presence snapshot exactly as received (the API serves these bytes).
    public private(set) var snapshotPayload: [UInt8]?
    /// When anything of this store (snapshot, event, node status) was last received.
    public private(set) var lastHeard: Timestamp?
    /// Each node of the store and its state, the latest word winning: snapshot, node event or the node's own status.
    public private(set) var nodes: [NodeKey: LinkState] = [:]

    /// A node of this store.
    public struct NodeKey: Hashable, Comparable, Sendable {
        public var department: UInt16
        public var node: String

        public static func < (lhs: NodeKey, rhs: NodeKey) -> Bool {
            (lhs.department, lhs.node) < (rhs.department, rhs.node)
        }
    }

    public init(store: UInt16, broker: String) {
        model = MonitorModel(store: store, broker: broker)
    }

    public var store: UInt16 { model.store }

    /// The store's name from its snapshot, or `Store N` before the first one.
    public var name: String { model.snapshot?.name ?? "Store \(model.store)" }

    /// Takes a presence snapshot (its decoded form and its bytes) received at `now`.
    public mutating func apply(snapshot: PresenceSnapshot, payload: [UInt8], at now: Timestamp) {
        guard snapshot.store == model.store else {
            model.noteDroppedMessage()
            return
        }
        model.apply(snapshot: snapshot, at: now)
        snapshotPayload = payload
        lastHeard = now
        for node in snapshot.nodes { nodes[NodeKey(department: node.department, node: node.node)] = node.state }
    }

    /// Takes a store event received at `now`; a redelivered event (same id) is listed once.
    public mutating func apply(event: StoreEvent, at now: Timestamp) {
        model.apply(event: event, at: now)
        guard event.store == model.store else { return }
        lastHeard = now
        if case .node(let department, let node, let state) = event.kind {
            nodes[NodeKey(department: department, node: node)] = state
        }
        guard !recentEvents.contains(where: { $0.id == event.id }) else { return }
        recentEvents.insert(event, at: 0)
        if recentEvents.count > Self.recentEventLimit { recentEvents.removeLast() }
    }

    /// Takes an alert received at `now`; a redelivered alert (same id) is listed once.
    public mutating func apply(alert: Alert, at now: Timestamp) {
        guard alert.store == model.store else { return }
        model.apply(alert: alert, at: now)
        lastHeard = now
        guard !recentAlerts.contains(where: { $0.id == alert.id }) else { return }
        recentAlerts.insert(alert, at: 0)
        if recentAlerts.count > Self.recentAlertLimit { recentAlerts.removeLast() }
    }

    /// Takes a node's own retained status (`online`, or `offline` from its will or a clean stop).
    public mutating func apply(nodeStatus state: LinkState, department: UInt16, node: String, at now: Timestamp) {
        nodes[NodeKey(department: department, node: node)] = state
        lastHeard = now
    }

    /// Forgets a node whose retained status was deleted (taken out of the mesh); a later snapshot that still lists it
    /// brings it back.
    public mutating func forget(department: UInt16, node: String) {
        nodes[NodeKey(department: department, node: node)] = nil
    }

    /// Takes a change of the broker link.
    public mutating func connection(changed connected: Bool, at now: Timestamp) {
        model.connection(changed: connected, at: now)
    }

    /// Whether nothing was heard of this store for `quietAfter` (or ever) by `now`.
    public func isQuiet(at now: Timestamp) -> Bool {
        guard let lastHeard else { return true }
        return now - lastHeard >= Self.quietAfter
    }

    /// Members and guests in the store by the latest snapshot.
    public var headcount: (members: Int, guests: Int) {
        guard let snapshot = model.snapshot else { return (0, 0) }
        return (snapshot.members.count, snapshot.occupancy.values.reduce(0) { $0 + $1.guests })
    }

    /// The nodes in department order, and how many are offline.
    public var nodesInOrder: [(key: NodeKey, state: LinkState)] {
        nodes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public var offlineNodeCount: Int { nodes.values.filter { $0 == .offline }.count }
}
