import ArgumentParser
import BeaconMeshService

extension ScannerOptions {
    /// How a config-file key sets its field of `ScannerOptions`, parsed by the field's own type.
    struct ConfigField: Sendable {
        /// Whether the command line already gave it (then the file's value is ignored).
        let isSet: @Sendable (ScannerOptions) -> Bool
        /// Sets the field from the file's values; the problem in words if they are not good.
        let apply: @Sendable (inout ScannerOptions, [String]) -> (value: String, problem: String)?
    }

    /// Every config-file key — the long flag in camelCase — and the field it fills. `ScannerOptionsTests` checks that
    /// it names every flag of `--help`, so a new option cannot be forgotten here.
    static let configFields: [String: ConfigField] = [
        "store": value(\.store), "department": value(\.department), "node": value(\.node),
        "broker": value(\.brokerOptions.broker), "username": value(\.brokerOptions.username),
        "passwordFile": value(\.brokerOptions.passwordFile), "cafile": value(\.brokerOptions.cafile),
        "source": value(\.source), "speed": value(\.speed), "uuid": list(\.uuids), "flush": value(\.flush),
        "lostAfter": value(\.lostAfter), "minRssi": value(\.minRssi), "qos": value(\.qos), "queueSize": value(\.queueSize),
        "details": flag(\.details), "advertise": flag(\.advertise), "measuredPower": value(\.measuredPower),
        "record": value(\.record), "scanInterval": value(\.scanInterval), "scanWindow": value(\.scanWindow),
        "activeScan": flag(\.activeScan), "pathLossExponent": value(\.pathLossExponent),
        "rssiAdjustment": value(\.rssiAdjustment), "immediateBelow": value(\.immediateBelow),
        "nearBelow": value(\.nearBelow), "defaultTxPower": value(\.defaultTxPower), "simRoute": value(\.simRoute),
        "simOutside": value(\.simOutside), "logLevel": value(\.logLevel), "healthInterval": value(\.healthInterval),
        "topicRoot": value(\.topicRoot),
    ]

    /// The keys a scanner config file may hold.
    public static var configKeys: Set<String> { Set(configFields.keys) }

    /// One value (a list is joined with commas: `simRoute: [10, 20]`).
    private static func value<Value: ScannerSettingValue>(_ field: any WritableKeyPath<ScannerOptions, Value?> & Sendable) -> ConfigField {
        ConfigField(isSet: { $0[keyPath: field] != nil }) { options, values in
            let text = values.joined(separator: ",")
            guard let value = Value(argument: text) else { return (text, Value.expectation) }
            options[keyPath: field] = value
            return nil
        }
    }

    /// A repeatable setting: every value of the file's list.
    private static func list<Value: ScannerSettingValue>(_ field: any WritableKeyPath<ScannerOptions, [Value]> & Sendable) -> ConfigField {
        ConfigField(isSet: { !$0[keyPath: field].isEmpty }) { options, values in
            var parsed: [Value] = []
            for text in values {
                guard let value = Value(argument: text) else { return (text, Value.expectation) }
                parsed.append(value)
            }
            options[keyPath: field] = parsed
            return nil
        }
    }

    /// A switch: true, yes or on; false, no or off.
    private static func flag(_ field: any WritableKeyPath<ScannerOptions, Bool> & Sendable) -> ConfigField {
        ConfigField(isSet: { $0[keyPath: field] }) { options, values in
            let text = values.joined(separator: ",")
            switch text.lowercased() {
            case "true", "yes", "on": options[keyPath: field] = true
            case "false", "no", "off": options[keyPath: field] = false
            default: return (text, "must be true or false")
            }
            return nil
        }
    }
}
