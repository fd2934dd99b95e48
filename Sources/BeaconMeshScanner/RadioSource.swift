import BeaconMeshBLE
import BeaconMeshCore
import Logging

/// Hears adverts from a local Bluetooth adapter through a raw HCI socket (and, with `--advertise`, broadcasts the
/// department's iBeacon from it), until its task is cancelled; then scanning and advertising are switched off.
///
/// The scanner's reader thread hands its chunks of events straight to `inbox`, each held there until the scanner loop
/// has processed it (without waiting: while the loop holds its limit of chunks or of their bytes, the scanner keeps
/// gathering, up to its buffer). The task itself only starts, waits and stops.
enum RadioSource {
    static func run(
        adapter index: Int, configuration: ScannerConfiguration, recorder: BTSnoopRecorder?, logger: Logger,
        open: @escaping ScannerService.AdapterOpener, inbox: ScannerInbox
    ) async {
        let deliver: @Sendable (ScannerService.Input) -> Void = { input in inbox.put { $0.append(input) } }
        let adapter = "hci\(index)"
        let scanner: LEScanner
        do {
            scanner = LEScanner(
                socket: try open(adapter, true), settings: configuration.scanSettings, recorder: recorder,
                onEvents: { chunk in inbox.putIfRoom { $0.append(.radioPackets(chunk)) } })
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
                let started = LEAdvertiser(socket: try open(adapter, false), beacon: beacon)
                _ = try await started.start()
                advertiser = started
                logger.info(
                    "advertising",
                    metadata: ["beacon": "\(BeaconKey.iBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor))"])
            } catch {
                try? await scanner.stop()
                deliver(.sourceFailed("\(error)"))
                return
            }
        }
        await scanner.waitUntilEnded()
        try? await advertiser?.stop()
        do {
            try await scanner.stop()
        } catch {
            logger.warning("could not switch scanning off", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
        }
        if scanner.droppedEvents > 0 {
            logger.warning("radio events dropped", metadata: ["adapter": "\(adapter)", "dropped": "\(scanner.droppedEvents)"])
        }
        if !Task.isCancelled {
            deliver(.sourceFailed(scanner.failure?.description ?? "\(adapter) stopped delivering events"))
        }
    }
}
