import BeaconMeshCore
import BeaconMeshService

/// The scanner's settings as written — on the command line or in a config file — before they are checked.
///
/// Flags win over the file. `resolve()` checks everything once and names where a bad value came from:
/// `--store '99999' …` for a flag, `scanner.yaml:3: store '99999' …` for the file.
public struct ScannerSettings: Sendable {
    /// Every setting's name: the long flag without dashes, in camelCase (the config file's keys).
    public static let keys: Set<String> = [
        "store", "department", "node", "broker", "source", "speed", "uuid", "flush", "lostAfter", "minRssi", "qos",
        "queueSize", "details", "advertise", "measuredPower", "username", "passwordFile", "cafile", "simRoute",
        "logLevel", "record", "scanInterval", "scanWindow", "activeScan", "pathLossExponent", "rssiAdjustment",
        "healthInterval", "topicRoot", "immediateBelow", "nearBelow", "defaultTxPower", "simOutside",
    ]

    private struct Setting {
        var values: [String]
        /// How to name it in an error: `--flag` or `file:line: key`.
        var origin: String
    }

    private var settings: [String: Setting] = [:]

    public init() {}

    /// Sets `key` from the command line (ignored when `value` is nil).
    public mutating func flag(_ key: String, _ value: String?) {
        guard let value else { return }
        settings[key] = Setting(values: [value], origin: "--" + ScannerSettings.kebab(key))
    }

    /// Sets a repeatable flag (ignored when empty).
    public mutating func flag(_ key: String, list: [String]) {
        guard !list.isEmpty else { return }
        settings[key] = Setting(values: list, origin: "--" + ScannerSettings.kebab(key))
    }

    /// Adds the file's settings under the flags already given.
    public mutating func add(_ file: ScannerConfigFile) {
        for (key, entry) in file.entries where settings[key] == nil {
            settings[key] = Setting(values: entry.values, origin: "\(file.path):\(entry.line): \(key)")
        }
    }

    /// The log level asked for (checked by `resolve`).
    public var logLevel: String { settings["logLevel"]?.values.first ?? "info" }

    /// Checks every setting and builds the scanner's configuration.
    public func resolve() throws(UsageError) -> ScannerConfiguration {
        let store = try number("store", UInt16.self, required: true)!
        let department = try number("department", UInt16.self, required: true)!
        let nodeID = text("node") ?? "a"
        guard let node = NodeAddress(store: store, department: department, node: nodeID) else {
            throw bad("node", nodeID, "must be 1-32 of a-z, 0-9 and -")
        }
        var configuration = ScannerConfiguration(node: node, broker: BrokerConnection(
            url: text("broker") ?? "mqtt://127.0.0.1:1883", username: text("username"),
            passwordFile: text("passwordFile"), caFile: text("cafile")))
        if let source = text("source") {
            guard let parsed = AdvertSource(source) else { throw bad("source", source, "must be hci0 (or another hciN), btsnoop:PATH or sim") }
            configuration.source = parsed
        }
        if let speed = text("speed") {
            guard let parsed = ReplaySpeed(speed) else { throw bad("speed", speed, "must be a positive number or max") }
            configuration.speed = parsed
        }
        for uuid in settings["uuid"]?.values ?? [] {
            guard let parsed = BeaconUUID(uuid) else { throw bad("uuid", uuid, "is not a UUID (8-4-4-4-12 hex digits)") }
            configuration.aggregation.allowedUUIDs.insert(parsed)
            if configuration.advertisedUUID == nil { configuration.advertisedUUID = parsed }
        }
        configuration.aggregation.flushInterval = try duration("flush") ?? configuration.aggregation.flushInterval
        configuration.aggregation.lostAfter = try duration("lostAfter") ?? configuration.aggregation.lostAfter
        configuration.healthInterval = try duration("healthInterval") ?? configuration.healthInterval
        if let minimum = try number("minRssi", Int8.self) {
            guard minimum <= 20 else { throw bad("minRssi", String(minimum), "must be between -127 and 20") }
            configuration.aggregation.minimumRSSI = minimum
        }
        if let qos = try number("qos", Int.self) {
            guard qos == 0 || qos == 1 else { throw bad("qos", String(qos), "must be 0 or 1") }
            configuration.sightingsQoS = qos
        }
        if let size = try number("queueSize", Int.self) {
            guard size > 0 else { throw bad("queueSize", String(size), "must be at least 1") }
            configuration.queueCapacity = size
        }
        configuration.aggregation.includeDetails = try boolean("details") ?? false
        configuration.advertise = try boolean("advertise") ?? false
        if let power = try number("measuredPower", Int8.self) { configuration.advertisedMeasuredPower = power }
        if let route = settings["simRoute"]?.values.joined(separator: ",") {
            let departments = route.split(separator: ",").map { UInt16($0.filter { !$0.isWhitespace }) }
            guard !departments.isEmpty, departments.allSatisfy({ $0 != nil }) else {
                throw bad("simRoute", route, "must list department numbers, e.g. 10,20,30")
            }
            configuration.simulationRoute = departments.compactMap { $0 }
        }
        if let outside = text("simOutside") {
            guard let duration = DurationText.parse(outside) else {
                throw bad("simOutside", outside, "must be a duration such as 0s or 60s")
            }
            configuration.simulationOutside = duration
        }
        configuration.recordPath = text("record")
        if let exponent = try decimal("pathLossExponent") {
            guard exponent >= 1, exponent <= 6 else { throw bad("pathLossExponent", String(exponent), "must be between 1 and 6") }
            configuration.aggregation.distanceModel.pathLossExponent = exponent
        }
        if let adjustment = try decimal("rssiAdjustment") { configuration.aggregation.distanceModel.rssiAdjustment = adjustment }
        if let immediate = try decimal("immediateBelow") {
            guard immediate > 0 else { throw bad("immediateBelow", String(immediate), "must be a distance above 0 (metres)") }
            configuration.aggregation.distanceModel.immediateBelow = immediate
        }
        if let near = try decimal("nearBelow") {
            guard near > configuration.aggregation.distanceModel.immediateBelow else {
                throw bad("nearBelow", String(near), "must be farther than the immediate limit (metres)")
            }
            configuration.aggregation.distanceModel.nearBelow = near
        }
        if let power = try number("defaultTxPower", Int8.self) {
            configuration.aggregation.distanceModel.defaultMeasuredPower = Int(power)
        }
        do {
            let interval = try duration("scanInterval") ?? .milliseconds(100)
            let window = try duration("scanWindow") ?? interval
            configuration.scanSettings = try ScanSettings(interval: interval, window: window,
                                                          mode: try boolean("activeScan") == true ? .active : .passive)
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("\(settings["scanInterval"]?.origin ?? settings["scanWindow"]?.origin ?? "--scan-interval"): \(error)")
        }
        if let root = text("topicRoot") {
            guard !root.isEmpty, !root.contains("/"), !root.contains("+"), !root.contains("#") else {
                throw bad("topicRoot", root, "must be one topic level without /, + or #")
            }
            configuration.topicRoot = root
        }
        let level = logLevel
        guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(level) else {
            throw bad("logLevel", level, "must be trace, debug, info, notice, warning, error or critical")
        }
        if configuration.advertise, case .adapter = configuration.source {} else if configuration.advertise {
            throw UsageError("\(settings["advertise"]?.origin ?? "--advertise") needs an hciN source: a replay or simulation has no radio")
        }
        return configuration
    }

    // MARK: Typed access

    private func text(_ key: String) -> String? { settings[key]?.values.first }

    private func bad(_ key: String, _ value: String, _ problem: String) -> UsageError {
        UsageError("\(settings[key]?.origin ?? "--" + ScannerSettings.kebab(key)) '\(value)' \(problem)")
    }

    private func number<T: FixedWidthInteger>(_ key: String, _ type: T.Type, required: Bool = false) throws(UsageError) -> T? {
        guard let value = text(key) else {
            if required { throw UsageError("--\(ScannerSettings.kebab(key)) is required (on the command line or in --config)") }
            return nil
        }
        guard let number = T(value) else { throw bad(key, value, "must be a whole number from \(T.min) to \(T.max)") }
        return number
    }

    private func decimal(_ key: String) throws(UsageError) -> Double? {
        guard let value = text(key) else { return nil }
        guard let number = Double(value), number.isFinite else { throw bad(key, value, "must be a number") }
        return number
    }

    private func duration(_ key: String) throws(UsageError) -> Duration? {
        guard let value = text(key) else { return nil }
        guard let duration = DurationText.parse(value), duration > .zero else {
            throw bad(key, value, "must be a duration such as 250ms, 5s or 1m")
        }
        return duration
    }

    private func boolean(_ key: String) throws(UsageError) -> Bool? {
        guard let value = text(key) else { return nil }
        switch value.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw bad(key, value, "must be true or false")
        }
    }

    /// `passwordFile` → `password-file`.
    static func kebab(_ key: String) -> String {
        var result = ""
        for character in key {
            if character.isUppercase { result += "-" + character.lowercased() } else { result.append(character) }
        }
        return result
    }
}
