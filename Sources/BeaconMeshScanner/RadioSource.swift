import BeaconMeshBLE
import BeaconMeshCore
import BeaconMeshThreads
import Logging

/// Hears adverts from a local Bluetooth adapter through a raw HCI socket (and, with `--advertise`, broadcasts the
/// department's iBeacon from it, started, changed or stopped live as `advertising` asks), until its task is
/// cancelled; then scanning and advertising are switched off.
///
/// The scanner's reader thread hands its chunks of events straight to `inbox`, each held there until the scanner loop
/// has processed it (without waiting: while the loop holds its limit of chunks or of their bytes, the scanner keeps
/// gathering, up to its buffer). The task itself only starts, waits and stops.
enum RadioSource {
    static func run(
        adapter index: Int, configuration: ScannerConfiguration, recorder: BTSnoopRecorder?, logger: Logger,
        open: @escaping ScannerService.AdapterOpener, inbox: ScannerInbox, advertising: AdvertisingControl
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
        // The advertising the node starts with must work, or the node does not run; a later change that fails is
        // logged and scanning goes on.
        var advertiser: LEAdvertiser?
        if let beacon = configuration.advertisedBeacon {
            do {
                advertiser = try await startAdvertising(beacon, on: adapter, open: open, logger: logger)
            } catch {
                try? await scanner.stop()
                deliver(.sourceFailed("\(error)"))
                return
            }
        }
        await withTaskGroup(of: Void.self) { [advertiser] group in
            group.addTask { await scanner.waitUntilEnded() }
            group.addTask {
                var current = advertiser
                var broadcasting = configuration.advertisedBeacon
                for await wish in advertising.wishes where wish != broadcasting {
                    try? await current?.stop()
                    current = nil
                    broadcasting = wish
                    guard let wish else {
                        logger.info("advertising stopped", metadata: ["adapter": "\(adapter)"])
                        continue
                    }
                    do {
                        current = try await startAdvertising(wish, on: adapter, open: open, logger: logger)
                    } catch {
                        logger.error("cannot advertise", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
                    }
                }
                try? await current?.stop()
            }
            await group.next()
            group.cancelAll()
        }
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

    private static func startAdvertising(
        _ beacon: IBeaconAdvertisingData, on adapter: String, open: ScannerService.AdapterOpener, logger: Logger
    ) async throws(HCIError) -> LEAdvertiser {
        let advertiser = LEAdvertiser(socket: try open(adapter, false), beacon: beacon)
        _ = try await advertiser.start()
        logger.info(
            "advertising",
            metadata: [
                "beacon": "\(BeaconKey.iBeacon(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor))",
                "measuredPower": "\(beacon.measuredPower)",
            ])
        return advertiser
    }
}
