/// The chain's nodes as the broker holds them: each node's retained status, its latest health (heard since the
/// directory was made) and the retained node configs. Fed from a subscription by `nodes list|set` and the
/// dashboard; pure, with the time of each message passed in.
public struct NodeDirectory: Sendable {
    /// One node, as `nodes list --json` prints it.
    public struct Entry: Sendable, Hashable {
        public var address: NodeAddress
        public var status: NodeStatus
        /// Its latest health report, `nil` before one arrived.
        public var health: NodeHealth?
        /// When its latest health arrived (our clock), `nil` before one.
        public var lastHeard: Timestamp?

        public init(address: NodeAddress, status: NodeStatus, health: NodeHealth? = nil, lastHeard: Timestamp? = nil) {
            self.address = address
            self.status = status
            self.health = health
            self.lastHeard = lastHeard
        }
    }

    private var statuses: [NodeAddress: NodeStatus] = [:]
    private var healths: [NodeAddress: (health: NodeHealth, at: Timestamp)] = [:]
    /// The retained store-wide node configs, by store.
    public private(set) var storeConfigs: [UInt16: NodeConfigDocument] = [:]
    /// The retained node configs of single nodes.
    public private(set) var nodeConfigs: [NodeAddress: NodeConfigDocument] = [:]

    public init() {}

    /// A node's retained status; `nil` when it was deleted (a zero-byte retained message).
    public mutating func record(status: NodeStatus?, of address: NodeAddress) {
        statuses[address] = status
    }

    /// A node's health report, heard at `now`.
    public mutating func record(health: NodeHealth, of address: NodeAddress, at now: Timestamp) {
        healths[address] = (health, now)
    }

    /// A retained node config of a store (`node == nil`) or of one node; `nil` when deleted.
    public mutating func record(config: NodeConfigDocument?, store: UInt16) {
        storeConfigs[store] = config
    }

    public mutating func record(config: NodeConfigDocument?, of address: NodeAddress) {
        nodeConfigs[address] = config
    }

    /// Every node with a status (of one store, or all), by store, department and node.
    public func entries(store: UInt16? = nil) -> [Entry] {
        statuses.filter { store == nil || $0.key.store == store }.sorted { $0.key < $1.key }.map { address, status in
            let heard = healths[address]
            return Entry(address: address, status: status, health: heard?.health, lastHeard: heard?.at)
        }
    }

    /// The newest version any node reports (by dotted numbers, then text); `nil` with no nodes.
    public var newestVersion: String? {
        statuses.values.map(\.version).filter { !$0.isEmpty }.max { Self.isOlder($0, than: $1) }
    }

    /// Whether `version` is older than `other`: compared by their dotted numbers (`1.10.0` after `1.9.2`), then as text.
    public static func isOlder(_ version: String, than other: String) -> Bool {
        let numbers = { (text: String) in text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) } }
        let (left, right) = (numbers(version), numbers(other))
        if left != right { return left.lexicographicallyPrecedes(right) }
        return version < other
    }
}
