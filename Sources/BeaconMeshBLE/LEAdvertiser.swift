import BeaconMeshCaptures
import BeaconMeshCore

/// Makes the node broadcast itself as an iBeacon through its adapter until `stop()`.
///
/// `start()` reads the controller's LE features, like `LEScanner`, and uses the same generation of commands, because a
/// controller refuses to mix them (and a scanner on the same adapter uses the extended ones where they exist):
/// - Bluetooth 4: LE Set Advertising Parameters (0x2006, non-connectable `ADV_NONCONN_IND`, ~100 ms), LE Set
///   Advertising Data (0x2008, `IBeaconAdvertisingData.bytes`), LE Set Advertise Enable (0x200A);
/// - Bluetooth 5: the same advertisement as an extended advertising set sending legacy PDUs (so Bluetooth 4 phones
///   hear it too): LE Set Extended Advertising Parameters (0x2036), … Data (0x2037), … Enable (0x2039), on set
///   `advertisingHandle`.
/// `stop()` disables advertising and closes the socket. Its socket needs no LE events: open it with
/// `HCISocket.open(adapter:leEvents: false)`, as `init(adapter:…)` does.
public final class LEAdvertiser: Sendable {
    /// The beacon broadcast.
    public let beacon: IBeaconAdvertisingData
    /// How often it is broadcast.
    public let settings: AdvertisingSettings
    /// The extended advertising set used on Bluetooth 5 controllers. BlueZ uses set 0 for the adapter's own
    /// advertising and numbers its advertising instances from 1; 0x0A stays out of their way.
    public let advertisingHandle: UInt8

    private let activity: LEActivity
    private var controller: HCIController { activity.controller }

    /// An advertiser over an open socket; it owns the socket from now on.
    public init(
        socket: HCISocket, beacon: IBeaconAdvertisingData, settings: AdvertisingSettings = AdvertisingSettings(),
        advertisingHandle: UInt8 = 0x0A, recorder: BTSnoopRecorder? = nil, commandTimeout: Duration = .seconds(2)
    ) {
        self.beacon = beacon
        self.settings = settings
        self.advertisingHandle = advertisingHandle
        activity = LEActivity(
            controller: HCIController(
                socket: socket, recorder: recorder, commandTimeout: commandTimeout, bufferedEvents: 16, onEvents: nil))
    }

    /// An advertiser on adapter `adapter` (`hci0`); throws the one-line reason if the adapter cannot be opened.
    public convenience init(
        adapter: String, beacon: IBeaconAdvertisingData, settings: AdvertisingSettings = AdvertisingSettings()
    ) throws(HCIError) {
        self.init(socket: try HCISocket.open(adapter: adapter, leEvents: false), beacon: beacon, settings: settings)
    }

    /// The adapter's name, e.g. `hci0`.
    public var device: String { controller.socket.device }

    /// Sets the advertisement up and enables it; returns the command set used. On failure the socket is closed.
    @discardableResult
    public func start() async throws(HCIError) -> LEScanner.CommandSet {
        try await activity.start(setUp: commands, disable: disable)
    }

    /// Disables advertising (if enabled) and closes the socket; throws if the controller did not confirm it — the
    /// socket is closed all the same.
    public func stop() async throws(HCIError) {
        try await activity.stop()
    }

    /// The set-up commands, in order, ending with the enable.
    func commands(_ set: LEScanner.CommandSet) -> [HCICommand] {
        switch set {
        case .legacy:
            [.leSetAdvertisingParameters(settings), .leSetAdvertisingData(beacon.bytes), .leSetAdvertiseEnable(true)]
        case .extended:
            [
                .leSetExtendedAdvertisingParameters(handle: advertisingHandle, settings),
                .leSetExtendedAdvertisingData(handle: advertisingHandle, beacon.bytes),
                .leSetExtendedAdvertisingEnable(true, handle: advertisingHandle),
            ]
        }
    }

    private func disable(_ set: LEScanner.CommandSet) -> HCICommand {
        switch set {
        case .legacy: .leSetAdvertiseEnable(false)
        case .extended: .leSetExtendedAdvertisingEnable(false, handle: advertisingHandle)
        }
    }
}
