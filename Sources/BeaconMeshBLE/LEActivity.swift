import BeaconMeshCore
import Synchronization

/// Runs one LE activity — scanning or advertising — on a controller, at most once: `start` sends the set-up commands
/// of the command generation the controller supports, `stop` sends the matching disable and closes the socket.
///
/// A controller refuses to mix legacy and extended LE commands, so every activity chooses the same way: the extended
/// commands when LE Read Local Supported Features (0x2003) reports "LE Extended Advertising" (Bluetooth 5), the legacy
/// ones otherwise. A `stop()` that comes while `start()` runs is honoured: `start` undoes the enable, closes the
/// socket and throws `connectionEnded`.
final class LEActivity: Sendable {
    private enum Phase {
        case idle
        case starting
        case running(LEScanner.CommandSet, disable: HCICommand)
        case stopped
    }

    let controller: HCIController
    private let phase = Mutex(Phase.idle)

    init(controller: HCIController) {
        self.controller = controller
    }

    /// The command set in use, while running.
    var commandSet: LEScanner.CommandSet? {
        phase.withLock { phase in
            if case .running(let set, _) = phase { return set }
            return nil
        }
    }

    /// Starts the controller, picks the command set, sends `setUp(set)` in order (ending with the enable) and keeps
    /// `disable(set)` for `stop()`; returns the set used. Throws `connectionEnded` if started before; on any failure
    /// the socket is closed.
    func start(
        setUp: (LEScanner.CommandSet) -> [HCICommand], disable: (LEScanner.CommandSet) -> HCICommand
    ) async throws(HCIError) -> LEScanner.CommandSet {
        let device = controller.socket.device
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
            let set: LEScanner.CommandSet = features.supportsExtendedAdvertising ? .extended : .legacy
            for command in setUp(set) {
                _ = try await controller.send(command)
            }
            let disableCommand = disable(set)
            let stillWanted = phase.withLock { phase in
                guard case .starting = phase else { return false }
                phase = .running(set, disable: disableCommand)
                return true
            }
            if !stillWanted {
                // stop() came while starting: undo the enable.
                _ = try? await controller.send(disableCommand)
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

    /// Sends the disable (if running) and closes the socket; throws if the controller did not confirm the disable —
    /// the socket is closed all the same. Runs at most once, and also after a failed `start()`.
    func stop() async throws(HCIError) {
        let previous = phase.withLock { phase in
            defer { phase = .stopped }
            return phase
        }
        switch previous {
        case .running(_, let disable):
            var failure: HCIError?
            do {
                _ = try await controller.send(disable)
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
}
