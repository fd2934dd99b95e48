import BeaconMeshCore

extension ScannerConfiguration {
    /// The node's own settings that head office may change live (its `--config` file and flags): the base under the
    /// store's and the node's node configs.
    var liveSettings: NodeSettings {
        var settings = NodeSettings()
        settings.rssiAdjustment = aggregation.distanceModel.rssiAdjustment
        settings.minRssi = Double(aggregation.minimumRSSI)
        settings.uuid = uuidFilter
        settings.advertise = advertise
        settings.measuredPower = Int(advertisedMeasuredPower)
        settings.flush = aggregation.flushInterval
        settings.healthInterval = healthInterval
        settings.logLevel = logLevel
        return settings
    }

    /// This configuration with `settings` in force (every key of `liveSettings` set).
    func applying(_ settings: NodeSettings) -> ScannerConfiguration {
        var configuration = self
        if let adjustment = settings.rssiAdjustment { configuration.aggregation.distanceModel.rssiAdjustment = adjustment }
        if let minimum = settings.minRssi { configuration.aggregation.minimumRSSI = Int8(minimum.rounded()) }
        if let uuids = settings.uuid {
            configuration.uuidFilter = uuids
            configuration.aggregation.allowedUUIDs = Set(uuids)
            configuration.advertisedUUID = uuids.first
        }
        if let advertise = settings.advertise { configuration.advertise = advertise }
        if let power = settings.measuredPower { configuration.advertisedMeasuredPower = Int8(power) }
        if let flush = settings.flush { configuration.aggregation.flushInterval = flush }
        if let interval = settings.healthInterval { configuration.healthInterval = interval }
        if let level = settings.logLevel { configuration.logLevel = level }
        return configuration
    }

    /// The config-file keys that exist but are not applied live: a node config naming one is refused with "needs a
    /// restart".
    static var restartKeys: Set<String> {
        ScannerOptions.configKeys.subtracting(NodeSettingKey.allCases.map(\.rawValue))
    }

    /// Why this node cannot take `value` of `key` live, or `nil`: advertising needs a radio.
    func refusal(of key: NodeSettingKey, _ value: NodeSettingValue) -> String? {
        guard key == .advertise, value == .bool(true) else { return nil }
        if case .adapter = source { return nil }
        return "needs an hciN source: this node replays or simulates, it has no radio to advertise with"
    }
}
