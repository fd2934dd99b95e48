/// What a running scanner node applies without a restart: the `settings` of the contract's node config, each key as
/// in the scanner's `--config` file. A `nil` field is not set at this level (a level below, or the node's own file,
/// decides it).
public struct NodeSettings: Sendable, Hashable {
    /// dB added to every reading (the node's calibration), −30…30.
    public var rssiAdjustment: Double?
    /// Readings weaker than this (dBm, −127…0) are ignored.
    public var minRssi: Double?
    /// Only iBeacons of these UUIDs are reported (empty: all).
    public var uuid: [BeaconUUID]?
    /// Whether the node broadcasts its department's iBeacon.
    public var advertise: Bool?
    /// The measured power at 1 m its advertisement announces (dBm, −127…0).
    public var measuredPower: Int?
    /// The flush window of sighting batches, 100ms…10s.
    public var flush: Duration?
    /// How often node health is published, 5s…1h.
    public var healthInterval: Duration?
    /// `trace` … `critical`.
    public var logLevel: String?

    public init() {}

    /// The levels swift-log knows, in order.
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// Whether no key is set (an empty `settings` takes its level away).
    public var isEmpty: Bool { setKeys.isEmpty }

    /// The keys set here, in the contract's order.
    public var setKeys: [NodeSettingKey] { NodeSettingKey.allCases.filter { self[$0] != nil } }

    /// `other`'s keys over these: the node's file, then the store's config, then the node's own.
    public func overridden(by other: NodeSettings) -> NodeSettings {
        var merged = self
        for key in other.setKeys { merged[key] = other[key] }
        return merged
    }

    /// The value of `key`, or `nil` when not set; setting it checks nothing (use `set(_:_:)` for untrusted values).
    public subscript(key: NodeSettingKey) -> NodeSettingValue? {
        get {
            switch key {
            case .rssiAdjustment: rssiAdjustment.map(NodeSettingValue.number)
            case .minRssi: minRssi.map(NodeSettingValue.number)
            case .uuid: uuid.map { .list($0.map(\.description)) }
            case .advertise: advertise.map(NodeSettingValue.bool)
            case .measuredPower: measuredPower.map { .number(Double($0)) }
            case .flush: flush.map { .text(DurationText.format($0)) }
            case .healthInterval: healthInterval.map { .text(DurationText.format($0)) }
            case .logLevel: logLevel.map(NodeSettingValue.text)
            }
        }
        set {
            guard let newValue else {
                clear(key)
                return
            }
            try? set(key, newValue)
        }
    }

    /// Takes `key` away.
    public mutating func clear(_ key: NodeSettingKey) {
        switch key {
        case .rssiAdjustment: rssiAdjustment = nil
        case .minRssi: minRssi = nil
        case .uuid: uuid = nil
        case .advertise: advertise = nil
        case .measuredPower: measuredPower = nil
        case .flush: flush = nil
        case .healthInterval: healthInterval = nil
        case .logLevel: logLevel = nil
        }
    }

    /// Sets `key` to `value` once it is of the key's type and within its range; else throws naming the key and
    /// changes nothing.
    public mutating func set(_ key: NodeSettingKey, _ value: NodeSettingValue) throws(NodeSettingError) {
        let problem = NodeSettingError(key: key.rawValue, problem: key.expectation)
        switch (key, value) {
        case (.rssiAdjustment, .number(let number)):
            guard number.isFinite, (-30...30).contains(number) else { throw problem }
            rssiAdjustment = number
        case (.minRssi, .number(let number)):
            guard number.isFinite, (-127...0).contains(number) else { throw problem }
            minRssi = number
        case (.measuredPower, .number(let number)):
            guard number.isFinite, number == number.rounded(), (-127...0).contains(number) else { throw problem }
            measuredPower = Int(number)
        case (.advertise, .bool(let flag)):
            advertise = flag
        case (.uuid, .list(let texts)):
            var uuids: [BeaconUUID] = []
            for text in texts {
                guard let uuid = BeaconUUID(text.lowercased()) else { throw problem }
                uuids.append(uuid)
            }
            uuid = uuids
        case (.flush, .text(let text)):
            guard let duration = DurationText.parse(text), duration >= .milliseconds(100), duration <= .seconds(10) else {
                throw problem
            }
            flush = duration
        case (.healthInterval, .text(let text)):
            guard let duration = DurationText.parse(text), duration >= .seconds(5), duration <= .seconds(3600) else {
                throw problem
            }
            healthInterval = duration
        case (.logLevel, .text(let text)):
            guard Self.logLevels.contains(text) else { throw problem }
            logLevel = text
        default:
            throw problem
        }
    }
}

/// A key of a node config's `settings`.
public enum NodeSettingKey: String, Sendable, CaseIterable, Hashable {
    case rssiAdjustment, minRssi, uuid, advertise, measuredPower, flush, healthInterval, logLevel

    /// What a good value looks like, after the key's name.
    public var expectation: String {
        switch self {
        case .rssiAdjustment: "must be a number of dB from -30 to 30"
        case .minRssi: "must be a number of dBm from -127 to 0"
        case .uuid: "must be a list of UUIDs (8-4-4-4-12 hex digits)"
        case .advertise: "must be true or false"
        case .measuredPower: "must be a whole number of dBm from -127 to 0"
        case .flush: "must be a duration from 100ms to 10s"
        case .healthInterval: "must be a duration from 5s to 1h"
        case .logLevel: "must be one of " + NodeSettings.logLevels.joined(separator: ", ")
        }
    }

    /// Reads a command line's `VALUE` for this key (`nodes set KEY=VALUE`): a number, `true`/`false`, a duration, a
    /// name, or for `uuid` a comma-separated list (empty: every UUID). The range is checked by `NodeSettings.set`.
    public func value(fromText text: String) -> NodeSettingValue {
        switch self {
        case .rssiAdjustment, .minRssi, .measuredPower:
            return Double(text).map(NodeSettingValue.number) ?? .text(text)
        case .advertise:
            if text == "true" { return .bool(true) }
            if text == "false" { return .bool(false) }
            return .text(text)
        case .uuid:
            return .list(text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) })
        case .flush, .healthInterval, .logLevel:
            return .text(text)
        }
    }
}

/// A setting's value as a payload or a command line carries it, before it is checked against its key.
public enum NodeSettingValue: Sendable, Hashable {
    case number(Double)
    case bool(Bool)
    case text(String)
    case list([String])
}

/// Why a node config's setting cannot be taken: the key, and what a good value looks like (or why it cannot be set
/// live).
public struct NodeSettingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var key: String
    public var problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key) \(problem)" }
}
