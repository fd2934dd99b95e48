import BeaconMeshCore
import Foundation
import Synchronization

/// A byte-level stand-in for a Bluetooth controller on the far end of a `SOCK_SEQPACKET` socketpair.
///
/// It reads each H4 command packet, keeps it, and answers with a Command Complete event as a controller would:
/// the recorded LE features answer for LE Read Local Supported Features, status 0 for everything else unless told to
/// refuse a command or to stay silent. Right after answering an enable of scanning it sends `advertisingEvents`.
/// It stops when the other end closes. No code under test runs here: it speaks HCI bytes only.
final class FakeController: Sendable {
    let descriptor: Int32
    let featuresAnswer: [UInt8]
    let refusals: [UInt16: UInt8]
    let silentOpcodes: Set<UInt16>
    let advertisingEvents: [[UInt8]]
    private let commands = Mutex<[[UInt8]]>([])
    private let done = DispatchSemaphore(value: 0)

    /// Recorded answers to LE Read Local Supported Features (from the shared captures).
    static let bluetooth4Features = HexDigits.bytes("040e0c01032000ff00000000000000")!  // cnrd__yeelock
    static let bluetooth5Features = HexDigits.bytes("040e0c01032000ff7f00ff06000000")!  // crossnite__NovaX-Escooter

    init(
        descriptor: Int32, featuresAnswer: [UInt8], refusals: [UInt16: UInt8] = [:], silentOpcodes: Set<UInt16> = [],
        advertisingEvents: [[UInt8]] = []
    ) {
        self.descriptor = descriptor
        self.featuresAnswer = featuresAnswer
        self.refusals = refusals
        self.silentOpcodes = silentOpcodes
        self.advertisingEvents = advertisingEvents
        Thread { [self] in
            run()
            done.signal()
        }.start()
    }

    /// The command packets received so far, in order.
    var receivedCommands: [[UInt8]] { commands.withLock { $0 } }

    /// Their opcodes.
    var receivedOpcodes: [UInt16] { receivedCommands.map { UInt16($0[1]) | UInt16($0[2]) << 8 } }

    /// Waits until the other end has closed and the fake has stopped; false on timeout.
    func waitUntilClosed(seconds: Double = 5) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 300)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 4, buffer[0] == 0x01 else { break }
            let packet = Array(buffer[0..<count])
            commands.withLock { $0.append(packet) }
            let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
            if silentOpcodes.contains(opcode) { continue }
            let status = refusals[opcode] ?? 0
            let answer =
                opcode == 0x2003 && status == 0
                ? featuresAnswer : [0x04, 0x0E, 0x04, 0x01, packet[1], packet[2], status]
            guard send(answer) else { break }
            let enablesScanning = (opcode == 0x200C || opcode == 0x2042) && packet[4] == 1
            if enablesScanning && status == 0 {
                for event in advertisingEvents where !send(event) { break }
            }
        }
        close(descriptor)
    }

    private func send(_ packet: [UInt8]) -> Bool {
        packet.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == packet.count
    }
}
