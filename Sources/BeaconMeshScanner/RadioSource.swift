import BeaconMeshCore
import Logging

/// Hears adverts from a local Bluetooth adapter through a raw HCI socket.
enum RadioSource {
    static func start(
        adapter index: Int, configuration: ScannerConfiguration, logger: Logger,
        deliver: @escaping @Sendable (ScannerService.Input) -> Void
    ) -> Task<Void, Never> {
        Task {
            deliver(.sourceFailed("hci\(index): the HCI radio source is being wired in"))
        }
    }
}
