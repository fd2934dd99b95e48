import BeaconMeshCaptures
import BeaconMeshCore

/// Scans for BLE advertisements on one adapter: sets the scan up, streams every advertising event, and turns
/// scanning off again on `stop()`.
///
/// `start()` runs the command sequence a controller needs:
/// 1. LE Read Local Supported Features (0x2003);
/// 2. if the controller has "LE Extended Advertising" (feature bit 12, Bluetooth 5): LE Set Extended Scan Parameters
///    (0x2041) and LE Set Extended Scan Enable (0x2042); otherwise LE Set Scan Parameters (0x200B) and LE Set Scan
///    Enable (0x200C). A Bluetooth 5 controller then sends LE Extended Advertising Reports, older ones LE Advertising
///    Reports; `HCIEventParser` reads both. Using the extended commands where they exist also keeps the node
///    consistent with the kernel, which uses them too: a controller refuses to mix the two kinds.
/// 3. Duplicate filtering is always off: the controller reports every advertisement, which the RSSI filter needs.
///
/// `onEvents` then receives every HCI event except command answers (in practice: LE Meta events carrying advertising
/// reports), each stamped with the time it was read, in chunks of what arrived within `handOverDelay` — called on
/// the reader thread, so the consumer's own queue is fed directly with no task in between. `stop()` disables
/// scanning, stops the reader thread and closes the socket; it runs at most once, and also after a failed `start()`.
public final class LEScanner: Sendable {
    /// Which generation of scan commands the controller was driven with.
    public enum CommandSet: Hashable, Sendable {
        /// Bluetooth 4 commands: LE Set Scan Parameters / LE Set Scan Enable.
        case legacy
        /// Bluetooth 5 commands: LE Set Extended Scan Parameters / LE Set Extended Scan Enable.
        case extended
    }

    /// How the radio scans.
    public let settings: ScanSettings
    private let activity: LEActivity
    private var controller: HCIController { activity.controller }

    /// A scanner over an open socket (from `HCISocket.open(adapter:)`, or any H4 descriptor — a fake controller's
    /// socketpair in tests and benchmarks); it owns the socket from now on. `recorder`, if given, receives every
    /// command sent and every event read. A command unanswered for `commandTimeout` fails `start()`.
    ///
    /// `onEvents` gets the events in chunks on the reader thread; it must return fast, and `false` when its consumer
    /// has no room: the chunk is then kept, growing with new events up to `bufferedEvents`, and offered again about
    /// 50 ms later; events beyond that are dropped and counted in `droppedEvents`.
    public init(
        socket: HCISocket, settings: ScanSettings = ScanSettings(), recorder: BTSnoopRecorder? = nil,
        commandTimeout: Duration = .seconds(2), bufferedEvents: Int = 4096, handOverDelay: Duration = .milliseconds(5),
        onEvents: @escaping @Sendable (HCIEventChunk) -> Bool
    ) {
        self.settings = settings
        activity = LEActivity(
            controller: HCIController(
                socket: socket, recorder: recorder, commandTimeout: commandTimeout, bufferedEvents: bufferedEvents,
                handOverDelay: handOverDelay, onEvents: onEvents))
    }

    /// A scanner on adapter `adapter` (`hci0`); throws the one-line reason if the adapter cannot be opened.
    public convenience init(
        adapter: String, settings: ScanSettings = ScanSettings(), recorder: BTSnoopRecorder? = nil,
        onEvents: @escaping @Sendable (HCIEventChunk) -> Bool
    ) throws(HCIError) {
        self.init(socket: try HCISocket.open(adapter: adapter), settings: settings, recorder: recorder, onEvents: onEvents)
    }

    /// The adapter's name, e.g. `hci0`.
    public var device: String { controller.socket.device }

    /// Returns once no more events will come — after `stop()`, or when the adapter went away (see `failure`) — or
    /// when the calling task is cancelled. One caller at a time.
    public func waitUntilEnded() async {
        await controller.waitUntilEnded()
    }

    /// Events dropped because `onEvents` had no room for more than `bufferedEvents`.
    public var droppedEvents: Int { controller.droppedEvents }

    /// Why the events ended on their own — the adapter was removed or switched off, or reading failed — or `nil`
    /// while scanning and after `stop()`.
    public var failure: HCIError? { controller.failure }

    /// The command set in use, once scanning.
    public var commandSet: CommandSet? { activity.commandSet }

    /// Sets the controller up and enables scanning (see the type's documentation); returns the command set used.
    /// On failure the socket is closed and the error says what to do; a scanner starts at most once.
    @discardableResult
    public func start() async throws(HCIError) -> CommandSet {
        try await activity.start(setUp: commands, disable: Self.disable)
    }

    /// Disables scanning (if it was enabled), stops the reader thread and closes the socket; the events end.
    /// Throws if the controller did not confirm that scanning stopped — the socket is closed all the same.
    public func stop() async throws(HCIError) {
        try await activity.stop()
    }

    /// The set-up commands, in order, ending with the enable. Duplicate filtering is always off.
    private func commands(_ set: CommandSet) -> [HCICommand] {
        switch set {
        case .extended:
            [.leSetExtendedScanParameters(settings), .leSetExtendedScanEnable(true, filterDuplicates: false)]
        case .legacy:
            [.leSetScanParameters(settings), .leSetScanEnable(true, filterDuplicates: false)]
        }
    }

    private static func disable(_ set: CommandSet) -> HCICommand {
        switch set {
        case .extended: .leSetExtendedScanEnable(false)
        case .legacy: .leSetScanEnable(false)
        }
    }
}
