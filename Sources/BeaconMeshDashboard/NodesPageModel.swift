import BeaconMeshCore

/// What the nodes pages show (`/nodes` for the chain, `/stores/{store}/nodes` for one store): every node the viewer
/// may see, offline ones first, each with its version (flagged when behind the newest), its config state and its
/// latest health; and the versions across those nodes, newest first. A pure value made from the `ChainBoard`.
///
/// "The newest" is the newest version among the nodes of the stores the viewer may see, the same on both pages, so
/// a store manager learns nothing of other stores' nodes.
public struct NodesPageModel: Sendable, Hashable {
    /// One node's row.
    public struct Row: Sendable, Hashable {
        public var address: NodeAddress
        public var storeName: String
        public var departmentName: String
        public var state: LinkState
        /// The version its status reports; empty when it says none.
        public var version: String
        /// Whether `version` is older than the newest (never for a node that reports none).
        public var behind: Bool
        /// Its store-wide and own config state.
        public var config: NodeConfigReports
        public var health: NodeHealth?
        /// When its latest health arrived (our clock).
        public var lastHeard: Timestamp?

        /// Whether a config level was refused.
        public var configRefused: Bool { config.store?.state == .refused || config.node?.state == .refused }
    }

    /// One version and how many nodes run it.
    public struct Version: Sendable, Hashable {
        public var version: String
        public var nodes: Int
        /// Whether it is older than the newest.
        public var behind: Bool
    }

    /// The store of a store's page; `nil` for the chain's.
    public var store: UInt16?
    /// The rows: offline first, then by store, department and node.
    public var rows: [Row]
    /// The newest version of the nodes the viewer may see; `nil` when none reports one.
    public var newestVersion: String?
    /// The versions reported, newest first.
    public var versions: [Version]

    public var offlineCount: Int { rows.filter { $0.state == .offline }.count }
    public var behindCount: Int { rows.filter(\.behind).count }
    public var refusedCount: Int { rows.filter(\.configRefused).count }

    /// The rows of `store` (every store when `nil`) that `visible` allows, from `board`.
    public init(_ board: ChainBoard, store: UInt16? = nil, stores visible: StoreAccess = .all) {
        self.store = store
        let seen = board.nodes.entries().filter { visible.allows($0.address.store) }
        let newest = seen.map(\.status.version).filter { !$0.isEmpty }.max { NodeDirectory.isOlder($0, than: $1) }
        func isBehind(_ version: String) -> Bool {
            guard let newest, !version.isEmpty else { return false }
            return NodeDirectory.isOlder(version, than: newest)
        }
        var rows: [Row] = []
        for entry in seen where store == nil || entry.address.store == store {
            let storeBoard = board.board(of: entry.address.store)
            let department = storeBoard.model.departmentName(entry.address.department)
            let status = entry.status
            rows.append(
                Row(
                    address: entry.address, storeName: storeBoard.name, departmentName: department, state: status.state,
                    version: status.version, behind: isBehind(status.version), config: status.config, health: entry.health,
                    lastHeard: entry.lastHeard))
        }
        rows.sort { first, second in
            let (firstOffline, secondOffline) = (first.state == .offline, second.state == .offline)
            if firstOffline != secondOffline { return firstOffline }
            return first.address < second.address
        }
        var counts: [String: Int] = [:]
        for row in rows where !row.version.isEmpty { counts[row.version, default: 0] += 1 }
        self.rows = rows
        self.newestVersion = newest
        self.versions = counts.keys.sorted { NodeDirectory.isOlder($1, than: $0) }.map {
            Version(version: $0, nodes: counts[$0] ?? 0, behind: isBehind($0))
        }
    }

    /// A config level's state as the page says it: `r3 applied`, `r4 refused: why`, or `none` before any arrived.
    public static func describe(_ report: NodeConfigReport?) -> String {
        guard let report else { return "none" }
        switch report.state {
        case .applied: return "r\(report.revision) applied"
        case .refused: return "r\(report.revision) refused: \(report.error ?? "no reason given")"
        }
    }
}
