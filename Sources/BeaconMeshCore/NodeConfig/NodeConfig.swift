/// The contract's node config (`stores/{store}/nodes/config` for every node of a store, or a node's own `…/config`):
/// `{"v":1,"revision":7,"at":…,"settings":{…}}`, retained, written by `beacon-coordinator nodes set`.
public struct NodeConfig: Sendable, Hashable {
    public var revision: Int64
    public var at: Timestamp
    public var settings: NodeSettings

    public init(revision: Int64, at: Timestamp, settings: NodeSettings) {
        self.revision = revision
        self.at = at
        self.settings = settings
    }
}

/// A node config as read from its payload, before its settings are checked: the keys in their order, as sent.
public struct NodeConfigDocument: Sendable, Hashable {
    public var revision: Int64
    public var at: Timestamp
    public var settings: [Entry]

    /// One `settings` member.
    public struct Entry: Sendable, Hashable {
        public var key: String
        /// `nil` for a JSON value no setting takes (an object, `null`, a list of non-strings).
        public var value: NodeSettingValue?

        public init(key: String, value: NodeSettingValue?) {
            self.key = key
            self.value = value
        }
    }

    public init(revision: Int64, at: Timestamp, settings: [Entry]) {
        self.revision = revision
        self.at = at
        self.settings = settings
    }

    /// The checked config: every key known, of its type and in range; a key in `restartKeys` (a scanner setting
    /// that is not applied live: `source`, `broker`, …) is refused with "needs a restart". Refused whole: the error
    /// names the first bad key.
    public func checked(restartKeys: Set<String> = []) throws(NodeSettingError) -> NodeConfig {
        var settings = NodeSettings()
        for entry in self.settings {
            guard let key = NodeSettingKey(rawValue: entry.key) else {
                if restartKeys.contains(entry.key) { throw NodeSettingError(key: entry.key, problem: "needs a restart") }
                throw NodeSettingError(key: entry.key, problem: "is not a node config setting")
            }
            guard let value = entry.value else { throw NodeSettingError(key: key.rawValue, problem: key.expectation) }
            try settings.set(key, value)
        }
        return NodeConfig(revision: revision, at: at, settings: settings)
    }
}

/// The two levels of node config a node reads: its store's (every node of the store) and its own.
public enum NodeConfigLevel: String, Sendable, Hashable, CaseIterable {
    case store
    case node
}

/// What a node did with the latest config of one level, as its retained status says (`config.store`, `config.node`).
public struct NodeConfigReport: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case applied
        case refused
    }

    public var revision: Int64
    public var state: State
    /// Why it was refused (naming the key), `nil` when applied.
    public var error: String?

    public init(revision: Int64, state: State, error: String? = nil) {
        self.revision = revision
        self.state = state
        self.error = error
    }
}

/// The status's `config`: an entry per level the node has received, `nil` for a level without one.
public struct NodeConfigReports: Sendable, Hashable {
    public var store: NodeConfigReport?
    public var node: NodeConfigReport?

    public init(store: NodeConfigReport? = nil, node: NodeConfigReport? = nil) {
        self.store = store
        self.node = node
    }

    public subscript(level: NodeConfigLevel) -> NodeConfigReport? {
        get { level == .store ? store : node }
        set { if level == .store { store = newValue } else { node = newValue } }
    }
}
