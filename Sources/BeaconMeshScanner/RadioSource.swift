import BeaconMeshBLE
import BeaconMeshCore
import Logging

/// Hears adverts from a local Bluetooth adapter through a raw HCI socket (and, with `--advertise`, broadcasts the
/// department's iBeacon from it), until its task is cancelled; then scanning and advertising are switched off.
enum RadioSource {
    static func start(
        adapter index: Int, configuration: ScannerConfiguration, recorder: BTSnoopRecorder?, logger: Logger,
        deliver: @escaping @Sendable (ScannerService.Input) -> Void
    ) -> Task<Void, Never> {
        Task {
            let adapter = "hci\(index)"
            let scanner: LEScanner
            do {
                scanner = try LEScanner(adapter: adapter, settings: configuration.scanSettings, recorder: recorder)
                let commands = try await scanner.start()
                logger.info("scanning", metadata: ["adapter": "\(adapter)", "commands": "\(commands)"])
            } catch {
                deliver(.sourceFailed("\(error)"))
                return
            }
            var advertiser: LEAdvertiser?
            if configuration.advertise {
                let beacon = IBeaconAdvertisingData(
                    uuid: configuration.advertisedUUID ?? ScannerConfiguration.defaultAdvertisedUUID,
                    major: configuration.node.store, minor: configuration.node.department,
                    measuredPower: configuration.advertisedMeasuredPower)
                do {
                    let started = try LEAdvertiser(adapter: adapter, beacon: beacon)
                    _ = try await started.start()
                    advertiser = started
                    logger.info("advertising", metadata: ["beacon": "\(BeaconKey.iBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor))"])
                } catch {
                    try? await scanner.stop()
                    deliver(.sourceFailed("\(error)"))
                    return
                }
            }
            for await event in scanner.events {
                let time = Timestamp(milliseconds: event.timestampMicroseconds / 1000)
                deliver(.packets([CaptureReplay.Packet(bytes: event.bytes, time: time)]))
            }
            try? await advertiser?.stop()
            do {
                try await scanner.stop()
            } catch {
                logger.warning("could not switch scanning off", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
            }
            if !Task.isCancelled {
                deliver(.sourceFailed(scanner.failure?.description ?? "\(adapter) stopped delivering events"))
            }
        }
    }
}
