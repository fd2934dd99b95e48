import BeaconMeshCore

/// What the radio should broadcast, as head office's node config changes it while the scanner runs: the latest wish
/// only (a newer one replaces one not yet acted on).
final class AdvertisingControl: Sendable {
    /// The department's iBeacon to broadcast, or `nil` for none.
    let wishes: AsyncStream<IBeaconAdvertisingData?>
    private let continuation: AsyncStream<IBeaconAdvertisingData?>.Continuation

    init() {
        (wishes, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks the radio to broadcast what `configuration` says.
    func want(_ configuration: ScannerConfiguration) {
        continuation.yield(configuration.advertisedBeacon)
    }

    func finish() {
        continuation.finish()
    }
}

extension ScannerConfiguration {
    /// The iBeacon this node broadcasts (major = store, minor = department), or `nil` when it does not advertise.
    var advertisedBeacon: IBeaconAdvertisingData? {
        guard advertise else { return nil }
        return IBeaconAdvertisingData(
            uuid: advertisedUUID ?? Self.defaultAdvertisedUUID, major: node.store, minor: node.department,
            measuredPower: advertisedMeasuredPower)
    }
}
