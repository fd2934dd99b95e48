import BeaconMeshCore
import BeaconMeshService
import Logging

/// The scanner's settings from the command line and its config file, merged (flags win), and checked into a
/// `ScannerConfiguration`.
///
/// A value that cannot be used is named where it came from: `--min-rssi '30' …` for a flag,
/// `scanner.yaml:3: minRssi '30' …` for the file. ArgumentParser itself rejects a flag whose value does not parse.
public struct ScannerSettings: Sendable {
    /// The node id when none is given.
    public static let defaultNode = "a"
    /// The LE scan interval when none is given.
    public static let defaultScanInterval: Duration = .milliseconds(100)

    /// The merged options.
    public private(set) var options: ScannerOptions
    /// Where each setting that came from the file was written: `file:line: key`.
    private var fileOrigins: [String: String] = [:]

    /// The command line's options, with what they leave out taken from `file`; throws a usage error naming the file,
    /// line and key of a value that does not parse.
    public init(commandLine: ScannerOptions, file: ScannerConfigFile? = nil) throws(UsageError) {
        options = commandLine
        guard let file else { return }
        for (key, entry) in file.entries.sorted(by: { $0.value.line < $1.value.line }) {
            guard let field = ScannerOptions.configFields[key], !field.isSet(commandLine), !entry.values.isEmpty else { continue }
            let origin = "\(file.path):\(entry.line): \(key)"
            if let bad = field.apply(&options, entry.values) {
                throw UsageError("\(origin) '\(bad.value)' \(bad.problem)")
            }
            fileOrigins[key] = origin
        }
    }

    /// The log level asked for (default info).
    public var logLevel: Logger.Level { options.logLevel ?? .info }

    /// Checks what only the settings together can tell and builds the scanner's configuration.
    public func resolve() throws(UsageError) -> ScannerConfiguration {
        guard let store = options.store else { throw required("store") }
        guard let department = options.department else { throw required("department") }
        let node = NodeAddress(store: store, department: department, node: options.node?.id ?? Self.defaultNode)!
        let broker = options.brokerOptions
        var configuration = ScannerConfiguration(
            node: node,
            broker: BrokerConnection(
                url: broker.broker ?? BrokerConnection.defaultURL, username: broker.username, passwordFile: broker.passwordFile,
                caFile: broker.cafile))
        configuration.source = options.source ?? configuration.source
        configuration.speed = options.speed ?? configuration.speed
        configuration.aggregation.allowedUUIDs = Set(options.uuids)
        configuration.uuidFilter = options.uuids
        configuration.logLevel = logLevel.rawValue
        configuration.advertisedUUID = options.uuids.first
        var aggregation = configuration.aggregation
        aggregation.flushInterval = options.flush?.duration ?? aggregation.flushInterval
        aggregation.lostAfter = options.lostAfter?.duration ?? aggregation.lostAfter
        configuration.healthInterval = options.healthInterval?.duration ?? configuration.healthInterval
        if let minimum = options.minRssi {
            guard minimum <= 20 else { throw bad("minRssi", minimum, "must be between -127 and 20") }
            aggregation.minimumRSSI = minimum
        }
        configuration.sightingsQoS = (options.qos ?? .atLeastOnce).rawValue
        if let size = options.queueSize {
            guard size > 0 else { throw bad("queueSize", size, "must be at least 1") }
            configuration.queueCapacity = size
        }
        aggregation.includeDetails = options.details
        configuration.advertise = options.advertise
        configuration.advertisedMeasuredPower = options.measuredPower ?? configuration.advertisedMeasuredPower
        configuration.simulationRoute = options.simRoute?.departments ?? configuration.simulationRoute
        configuration.simulationOutside = options.simOutside?.duration ?? configuration.simulationOutside
        configuration.recordPath = options.record
        var model = aggregation.distanceModel
        if let exponent = options.pathLossExponent {
            guard exponent.isFinite, exponent >= 1, exponent <= 6 else {
                throw bad("pathLossExponent", exponent, "must be between 1 and 6")
            }
            model.pathLossExponent = exponent
        }
        if let adjustment = options.rssiAdjustment {
            guard adjustment.isFinite else { throw bad("rssiAdjustment", adjustment, "must be a number") }
            model.rssiAdjustment = adjustment
        }
        if let immediate = options.immediateBelow {
            guard immediate.isFinite, immediate > 0 else {
                throw bad("immediateBelow", immediate, "must be a distance above 0 (metres)")
            }
            model.immediateBelow = immediate
        }
        if let near = options.nearBelow {
            guard near.isFinite, near > model.immediateBelow else {
                throw bad("nearBelow", near, "must be farther than the immediate limit (metres)")
            }
            model.nearBelow = near
        }
        if let power = options.defaultTxPower { model.defaultMeasuredPower = Int(power) }
        aggregation.distanceModel = model
        configuration.aggregation = aggregation
        do {
            let interval = options.scanInterval?.duration ?? Self.defaultScanInterval
            configuration.scanSettings = try ScanSettings(
                interval: interval, window: options.scanWindow?.duration ?? interval,
                mode: options.activeScan ? .active : .passive)
        } catch {
            let origin = options.scanInterval != nil ? origin(of: "scanInterval") : origin(of: "scanWindow")
            throw UsageError("\(origin): \(error)")
        }
        if let root = options.topicRoot {
            guard !root.isEmpty, !root.contains("/"), !root.contains("+"), !root.contains("#") else {
                throw bad("topicRoot", root, "must be one topic level without /, + or #")
            }
            configuration.topicRoot = root
        }
        if configuration.advertise, case .adapter = configuration.source {
        } else if configuration.advertise {
            throw UsageError("\(origin(of: "advertise")) needs an hciN source: a replay or simulation has no radio")
        }
        return configuration
    }

    /// `--flag` or `file:line: key`.
    private func origin(of key: String) -> String {
        fileOrigins[key] ?? "--" + Self.kebab(key)
    }

    private func bad(_ key: String, _ value: some CustomStringConvertible, _ problem: String) -> UsageError {
        UsageError("\(origin(of: key)) '\(value)' \(problem)")
    }

    private func required(_ key: String) -> UsageError {
        UsageError("--\(Self.kebab(key)) is required (on the command line or in --config)")
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
