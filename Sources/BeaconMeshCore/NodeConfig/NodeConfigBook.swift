/// A running node's config from head office, decided purely: its own settings (file and flags), the store's node
/// config over them, its own node config over both. Feed it each level's retained message; it says what to apply and
/// what the status reports.
///
/// Rules (the contract's "Node config"): a config with an unknown key, a wrong type or an out-of-range value is
/// refused whole and the node keeps what it had; a revision lower than the one that level applied is refused (since
/// this start: the book lives as long as the process); a zero-byte message or empty `settings` takes the level away.
public struct NodeConfigBook: Sendable {
    /// The node's own settings (its `--config` file and flags), under both levels.
    public let base: NodeSettings
    /// Scanner settings that exist but are not applied live: refused with "needs a restart".
    public let restartKeys: Set<String>
    /// Settings this node cannot take in its situation, with why (`advertise` on a node without a radio).
    public let refusedValues: @Sendable (NodeSettingKey, NodeSettingValue) -> String?

    private var levels: [NodeConfigLevel: NodeSettings] = [:]
    private var appliedRevisions: [NodeConfigLevel: Int64] = [:]
    /// Refusals already logged: a retained config is delivered again at every reconnection.
    private var toldRefusals: Set<String> = []
    /// What the status says of each level.
    public private(set) var reports = NodeConfigReports()

    public init(
        base: NodeSettings, restartKeys: Set<String> = [],
        refusedValues: @escaping @Sendable (NodeSettingKey, NodeSettingValue) -> String? = { _, _ in nil }
    ) {
        self.base = base
        self.restartKeys = restartKeys
        self.refusedValues = refusedValues
    }

    /// The settings in force: `base`, then the store's, then the node's own.
    public var effective: NodeSettings {
        base.overridden(by: levels[.store] ?? NodeSettings()).overridden(by: levels[.node] ?? NodeSettings())
    }

    /// What a level's message was.
    public enum Message: Sendable, Hashable {
        /// A zero-byte retained message: the level's config was deleted.
        case removed
        /// Not a node config at all (not JSON, unknown `v`, wrong types); `revision` when it could be read.
        case unreadable(reason: String, revision: Int64?)
        case document(NodeConfigDocument)
    }

    /// What `receive` decided.
    public struct Outcome: Sendable, Hashable {
        /// The settings in force changed: apply `effective`.
        public var changed: Bool
        /// A refusal to log (once per level, revision and reason), `nil` when applied or told before.
        public var refusalToLog: String?
    }

    /// Takes the latest retained message of `level`; the status should be published again afterwards.
    public mutating func receive(_ message: Message, level: NodeConfigLevel) -> Outcome {
        let before = effective
        switch message {
        case .removed:
            levels[level] = nil
            reports[level] = nil
        case .unreadable(let reason, let revision):
            return refuse(level: level, revision: revision ?? reports[level]?.revision ?? 0, reason: reason)
        case .document(let document):
            if let applied = appliedRevisions[level], document.revision < applied {
                return refuse(
                    level: level, revision: document.revision,
                    reason: "revision \(document.revision) is lower than the applied revision \(applied)")
            }
            let config: NodeConfig
            do {
                config = try document.checked(restartKeys: restartKeys)
            } catch {
                return refuse(level: level, revision: document.revision, reason: error.description)
            }
            for key in config.settings.setKeys {
                if let value = config.settings[key], let why = refusedValues(key, value) {
                    return refuse(level: level, revision: document.revision, reason: "\(key.rawValue) \(why)")
                }
            }
            levels[level] = config.settings.isEmpty ? nil : config.settings
            appliedRevisions[level] = document.revision
            reports[level] = config.settings.isEmpty ? nil : NodeConfigReport(revision: document.revision, state: .applied)
        }
        return Outcome(changed: effective != before, refusalToLog: nil)
    }

    private mutating func refuse(level: NodeConfigLevel, revision: Int64, reason: String) -> Outcome {
        reports[level] = NodeConfigReport(revision: revision, state: .refused, error: reason)
        let told = toldRefusals.insert("\(level.rawValue) \(revision) \(reason)").inserted
        return Outcome(changed: false, refusalToLog: told ? "\(level.rawValue) node config revision \(revision) refused: \(reason)" : nil)
    }
}
