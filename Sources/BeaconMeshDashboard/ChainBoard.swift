import BeaconMeshCore
import BeaconMeshWire

/// Everything the dashboard knows of the chain: one `StoreBoard` per store heard, the nodes' retained status and
/// health (`NodeDirectory`, for the nodes pages), the coordinators' status and the broker link. Reads the contract's topics (`Topics.parse`) and payloads (`WireCodec`); a pure value.
public struct ChainBoard: Sendable {
    /// The broker as the pages name it.
    public let broker: String
    /// The stores shown; empty: every store heard.
    public let storeFilter: Set<UInt16>
    private let topics: Topics

    public private(set) var stores: [UInt16: StoreBoard] = [:]
    /// Every shown store's nodes: retained status (versions, config state) and latest health.
    public private(set) var nodes = NodeDirectory()
    /// Each coordinator's retained status, by coordinator id.
    public private(set) var coordinators: [String: CoordinatorStatus] = [:]
    /// Each coordinator's webhook endpoints as its latest health report had them, by coordinator id.
    public private(set) var webhooks: [String: [CoordinatorHealth.Webhook]] = [:]
    /// The beacons each store hears now, from the sightings the survey page subscribes to.
    private(set) var heard = HeardBeacons()
    /// The broker link, as the monitor models it.
    public private(set) var connection: MonitorModel.Connection = .connecting
    /// Messages taken in, and messages that could not be read (dropped, counted).
    public private(set) var messagesReceived: UInt64 = 0
    public private(set) var messagesDropped: UInt64 = 0

    /// What one message changed.
    public enum Change: Hashable, Sendable {
        /// One store's page changed.
        case store(UInt16)
        /// Something of the whole chain (a coordinator's status).
        case chain
        /// Nothing (a message not for us, or unreadable).
        case none
    }

    public init(broker: String, stores: Set<UInt16> = [], topicRoot: String = Topics.defaultRoot) {
        self.broker = broker
        self.storeFilter = stores
        self.topics = Topics(root: topicRoot)
        for store in stores { self.stores[store] = StoreBoard(store: store, broker: broker) }
    }

    /// Takes one broker message received at `now` and says what it changed; an unreadable payload is counted and its
    /// `WireError` returned, for the caller to log.
    public mutating func receive(topic: String, payload: [UInt8], at now: Timestamp) -> (change: Change, dropReason: WireError?) {
        messagesReceived += 1
        do throws(WireError) {
            switch topics.parse(topic) {
            case .presence(let store)?:
                guard shows(store), !payload.isEmpty else { return (.none, nil) }
                let snapshot = try WireCodec.decodePresenceSnapshot(payload)
                try Self.sameStore(snapshot.store, topic: store)
                withStore(store) { $0.apply(snapshot: snapshot, payload: payload, at: now) }
                return (.store(store), nil)
            case .events(let store)?:
                guard shows(store) else { return (.none, nil) }
                let event = try WireCodec.decodeEvent(payload)
                try Self.sameStore(event.store, topic: store)
                withStore(store) { $0.apply(event: event, at: now) }
                return (.store(store), nil)
            case .alerts(let store)?:
                guard shows(store) else { return (.none, nil) }
                let alert = try WireCodec.decodeAlert(payload)
                try Self.sameStore(alert.store, topic: store)
                withStore(store) { $0.apply(alert: alert, at: now) }
                return (.store(store), nil)
            case .nodeStatus(let node)?:
                guard shows(node.store) else { return (.none, nil) }
                guard !payload.isEmpty else {
                    // A zero-byte retained status: the node was taken out of the mesh.
                    let known = nodes.entries(store: node.store).contains { $0.address == node }
                    nodes.record(status: nil, of: node)
                    stores[node.store]?.forget(department: node.department, node: node.node)
                    return (known ? .store(node.store) : .none, nil)
                }
                let status = try WireCodec.decodeNodeStatus(payload)
                nodes.record(status: status, of: node)
                withStore(node.store) { $0.apply(nodeStatus: status.state, department: node.department, node: node.node, at: now) }
                return (.store(node.store), nil)
            case .sightings(let node)?:
                guard shows(node.store) else { return (.none, nil) }
                let batch = try WireCodec.decodeSightingBatch(payload)
                guard batch.node == node else {
                    throw WireError.absurdValue(field: "node", value: "\(batch.node) under the topic of \(node)")
                }
                heard.record(batch, at: now)
                // Only the survey page lists them, and it asks every few seconds: no live page changes.
                return (.none, nil)
            case .nodeHealth(let node)?:
                guard shows(node.store) else { return (.none, nil) }
                nodes.record(health: try WireCodec.decodeNodeHealth(payload), of: node, at: now)
                // Only the nodes pages show health, and they are drawn when asked for: no live page changes.
                return (.none, nil)
            case .coordinatorStatus(let id)?:
                if payload.isEmpty {
                    coordinators[id] = nil
                } else {
                    coordinators[id] = try WireCodec.decodeCoordinatorStatus(payload)
                }
                return (.chain, nil)
            case .coordinatorHealth(let id)?:
                let reported = try WireCodec.decodeCoordinatorHealth(payload).webhooks
                // Counts change at every report; the page changes when an endpoint starts or stops failing, or its
                // backlog or error does.
                func shown(_ list: [CoordinatorHealth.Webhook]?) -> [String] {
                    (list ?? []).map {
                        "\($0.name) \($0.failingSince.map { "\($0.milliseconds)" } ?? "ok") \($0.backlog) \($0.error ?? "")"
                    }
                }
                let changed = shown(webhooks[id]) != shown(reported)
                webhooks[id] = reported.isEmpty ? nil : reported
                return (changed ? .chain : .none, nil)
            default:
                return (.none, nil)
            }
        } catch {
            messagesDropped += 1
            return (.none, error)
        }
    }

    /// Takes a change of the broker link at `now`; every store's page marks its data stale while it is lost.
    public mutating func connection(changed connected: Bool, at now: Timestamp) {
        if connected {
            connection = .connected
        } else if !isLinkLost {
            connection = .lost(since: now)  // keep the time it was first lost
        }
        for store in stores.keys { stores[store]?.connection(changed: connected, at: now) }
    }

    /// Whether the broker link is lost (what the pages show may be out of date).
    public var isLinkLost: Bool {
        if case .lost = connection { return true }
        return false
    }

    /// Whether this dashboard shows `store` (all stores when no filter was given).
    public func shows(_ store: UInt16) -> Bool { storeFilter.isEmpty || storeFilter.contains(store) }

    /// The stores in number order.
    public var storesInOrder: [StoreBoard] { stores.keys.sorted().compactMap { stores[$0] } }

    /// The coordinator that serves `store`, with its id: the online one that decides for it (holds its lease: its
    /// `active` lists it); when none does, the first by id that lists it (a standby, or one that is offline).
    public func coordinator(of store: UInt16) -> (id: String, status: CoordinatorStatus)? {
        holder(of: store)
            ?? coordinators.keys.sorted().lazy.compactMap { id in
                self.coordinators[id].flatMap { $0.stores.contains(store) ? (id, $0) : nil }
            }.first
    }

    /// The online coordinator that decides for `store` now (its `active` lists it), with its id; `nil`: no coordinator
    /// holds the store, so nobody is greeted there.
    public func holder(of store: UInt16) -> (id: String, status: CoordinatorStatus)? {
        coordinators.keys.sorted().lazy.compactMap { id in
            self.coordinators[id].flatMap { $0.state == .online && $0.active.contains(store) ? (id, $0) : nil }
        }.first
    }

    /// The ids of the online coordinators that list `store` but do not decide for it: they stand by to take it over.
    public func standbys(of store: UInt16) -> [String] {
        coordinators.keys.sorted().filter { id in
            coordinators[id].map { $0.state == .online && $0.stores.contains(store) && !$0.active.contains(store) } ?? false
        }
    }

    /// The board of `store`; for a store not heard yet, an empty one that shares the chain's broker link.
    public func board(of store: UInt16) -> StoreBoard {
        if let board = stores[store] { return board }
        var board = StoreBoard(store: store, broker: broker)
        switch connection {
        case .connecting: break
        case .connected: board.connection(changed: true, at: Timestamp(milliseconds: 0))
        case .lost(let since): board.connection(changed: false, at: since)
        }
        return board
    }

    /// A body that names another store than its topic is refused (`absurd-value`).
    private static func sameStore(_ body: UInt16, topic store: UInt16) throws(WireError) {
        guard body == store else { throw WireError.absurdValue(field: "store", value: "\(body) under the topic of store \(store)") }
    }

    private mutating func withStore(_ store: UInt16, _ change: (inout StoreBoard) -> Void) {
        if stores[store] == nil { stores[store] = board(of: store) }
        change(&stores[store]!)
    }
}
