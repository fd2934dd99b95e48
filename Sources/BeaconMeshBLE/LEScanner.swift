import BeaconMeshCore
import Synchronization

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
/// `events` then yields every HCI event except command answers (in practice: LE Meta events carrying advertising
/// reports), stamped with the time it was read. `stop()` disables scanning, stops the reader thread and closes the
/// socket; it runs at most once, and also after a failed `start()`.
public final class LEScanner: Sendable {
    /// Which generation of scan commands the controller was driven with.
    public enum CommandSet: Hashable, Sendable {
        /// Bluetooth 4 commands: LE Set Scan Parameters / LE Set Scan Enable.
        case legacy
        /// Bluetooth 5 commands: LE Set Extended Scan Parameters / LE Set Extended Scan Enable.
        case extended
    }

    private enum Phase {
        case idle
        case starting
        case scanning(CommandSet)
        case stopped
    }

    /// How the radio scans.
    public let settings: ScanSettings
    private let controller: HCIController
    private let phase = Mutex(Phase.idle)

    /// A scanner over an open socket (from `HCISocket.open(adapter:)`, or any H4 descriptor); it owns the socket from
    /// now on. `recorder`, if given, receives every command sent and every event read. A command unanswered for
    /// `commandTimeout` fails `start()`; `bufferedEvents` events wait for a slow consumer before the oldest are dropped.
    public init(
        socket: HCISocket, settings: ScanSettings = ScanSettings(), recorder: BTSnoopRecorder? = nil,
        commandTimeout: Duration = .seconds(2), bufferedEvents: Int = 4096
    ) {
        self.settings = settings
        controller = HCIController(
            socket: socket, recorder: recorder, commandTimeout: commandTimeout, bufferedEvents: bufferedEvents)
    }

    /// A scanner on adapter `adapter` (`hci0`); throws the one-line reason if the adapter cannot be opened.
    public convenience init(
        adapter: String, settings: ScanSettings = ScanSettings(), recorder: BTSnoopRecorder? = nil
    ) throws(HCIError) {
        self.init(socket: try HCISocket.open(adapter: adapter), settings: settings, recorder: recorder)
    }

    /// The adapter's name, e.g. `hci0`.
    public var device: String { controller.socket.device }

    /// Every event the controller sends while scanning, except command answers; finishes after `stop()` or when the
    /// adapter goes away. Iterate it once.
    public var events: AsyncStream<HCIEventPacket> { controller.events }

    /// Events dropped because the consumer of `events` fell more than `bufferedEvents` behind.
    public var droppedEvents: Int { controller.droppedEvents }

    /// Why `events` finished on its own — the adapter was removed or switched off, or reading failed — or `nil`
    /// while scanning and after `stop()`.
    public var failure: HCIError? { controller.failure }

    /// The command set in use, once scanning.
    public var commandSet: CommandSet? {
        phase.withLock { phase in
            if case .scanning(let set) = phase { return set }
            return nil
        }
    }

    /// Sets the controller up and enables scanning (see the type's documentation); returns the command set used.
    /// On failure the socket is closed and the error says what to do; a scanner starts at most once.
    @discardableResult
    public func start() async throws(HCIError) -> CommandSet {
        let mayStart = phase.withLock { phase in
            guard case .idle = phase else { return false }
            phase = .starting
            return true
        }
        guard mayStart else { throw HCIError(device: device, problem: .connectionEnded) }
        do throws(HCIError) {
            try controller.start()
            let answer = try await controller.send(.leReadLocalSupportedFeatures)
            let features = LESupportedFeatures(answer) ?? LESupportedFeatures(rawValue: 0)
            let set: CommandSet = features.supportsExtendedAdvertising ? .extended : .legacy
            switch set {
            case .extended:
                _ = try await controller.send(.leSetExtendedScanParameters(settings))
                _ = try await controller.send(.leSetExtendedScanEnable(true, filterDuplicates: false))
            case .legacy:
                _ = try await controller.send(.leSetScanParameters(settings))
                _ = try await controller.send(.leSetScanEnable(true, filterDuplicates: false))
            }
            let stillWanted = phase.withLock { phase in
                guard case .starting = phase else { return false }
                phase = .scanning(set)
                return true
            }
            if !stillWanted {
                // stop() came while starting: undo the enable.
                _ = try? await controller.send(Self.disable(set))
                controller.shutDown()
                throw HCIError(device: device, problem: .connectionEnded)
            }
            return set
        } catch {
            phase.withLock { $0 = .stopped }
            controller.shutDown()
            throw error
        }
    }

    /// Disables scanning (if it was enabled), stops the reader thread and closes the socket; `events` finishes.
    /// Throws if the controller did not confirm that scanning stopped — the socket is closed all the same.
    public func stop() async throws(HCIError) {
        let previous = phase.withLock { phase in
            defer { phase = .stopped }
            return phase
        }
        switch previous {
        case .scanning(let set):
            var failure: HCIError?
            do {
                _ = try await controller.send(Self.disable(set))
            } catch {
                failure = error
            }
            controller.shutDown()
            if let failure { throw failure }
        case .idle:
            controller.shutDown()
        case .starting, .stopped:
            return  // start() cleans up itself; a second stop() has nothing to do.
        }
    }

    private static func disable(_ set: CommandSet) -> HCICommand {
        switch set {
        case .extended: .leSetExtendedScanEnable(false)
        case .legacy: .leSetScanEnable(false)
        }
    }
}
