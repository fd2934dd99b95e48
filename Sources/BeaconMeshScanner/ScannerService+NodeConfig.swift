import BeaconMeshCore
import BeaconMeshMQTT
import BeaconMeshWire
import Logging
import Synchronization

extension ScannerService {
    /// Puts head office's settings in force: the batching and filters of the aggregator, the log level, the radio's
    /// advertising (health's interval is read from `inForce` by the loop).
    func apply(_ inForce: ScannerConfiguration, to state: inout ScannerState, advertising: AdvertisingControl) {
        state.pipeline.reconfigure(inForce.aggregation)
        let level = Logger.Level(rawValue: inForce.logLevel) ?? .info
        loggerInForce.withLock { $0.logLevel = level }
        if case .adapter = inForce.source { advertising.want(inForce) }
        logger.info(
            "node config applied",
            metadata: [
                "rssiAdjustment": "\(inForce.aggregation.distanceModel.rssiAdjustment)",
                "minRssi": "\(inForce.aggregation.minimumRSSI)", "uuid": "\(inForce.uuidFilter)",
                "advertise": "\(inForce.advertise)", "measuredPower": "\(inForce.advertisedMeasuredPower)",
                "flush": "\(inForce.aggregation.flushInterval)", "healthInterval": "\(inForce.healthInterval)",
                "logLevel": "\(inForce.logLevel)",
            ])
    }

    /// Publishes the retained `online` status again, with what the node did with head office's configs.
    func publishStatus(config: NodeConfigReports) {
        let online = Self.status(.online, of: configuration, boot: boot, startedAt: startedAt, config: config)
        do {
            try client.publish(
                topic: topics.nodeStatus(configuration.node), payload: WireCodec.encode(online), qos: .atLeastOnce, retain: true)
        } catch {
            logger.warning("status not sent", metadata: ["error": "\(error)"])
        }
    }
}
