import BeaconMeshCore
import CBlueZ
import Glibc
import Synchronization

/// An open connection to one Bluetooth controller that sends HCI commands and carries its events: a raw HCI socket
/// on an adapter, or any file descriptor that carries H4 packets (a socketpair in tests, a UART).
///
/// The only place in BeaconMesh that calls libbluetooth and the socket system calls. `open(adapter:)` checks that
/// the adapter exists and is up and installs an event filter, so that a missing adapter, a missing permission or a
/// switched-off adapter fails right here with a clear `HCIError`. Reading is `HCIEventReader`'s job; close the socket
/// only after its reader has stopped (the descriptor number could otherwise be reused under the reader).
public final class HCISocket: Sendable {
    /// The adapter's name (`hci0`), or whatever name the adopted descriptor was given; used in error messages.
    public let device: String
    /// How packets arrive: one per read (raw HCI socket, `SOCK_SEQPACKET`) or as a byte stream.
    public let framing: HCIEventReader.Framing
    /// The descriptor while open, -1 once closed; the lock also keeps two commands from interleaving on a stream.
    private let openDescriptor: Mutex<Int32>

    /// Takes over `descriptor` (closed by `close()` or deinit); for socketpairs, UARTs, and tests.
    public init(adopting descriptor: Int32, device: String, framing: HCIEventReader.Framing) {
        self.device = device
        self.framing = framing
        openDescriptor = Mutex(descriptor)
    }

    deinit {
        close()
    }

    /// Opens a raw HCI socket on adapter `name` (`hci0`, `hci1`, …), checks it is up, and lets through only HCI
    /// events: Command Complete, Command Status and, if `leEvents`, LE Meta events (the advertising reports).
    public static func open(adapter name: String, leEvents: Bool = true) throws(HCIError) -> HCISocket {
        let digits = name.dropFirst(3)
        guard name.hasPrefix("hci"), !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            Int(digits) != nil
        else { throw HCIError(device: name, problem: .invalidAdapterName) }
        let deviceID = try HCIError.systemCall("hci_devid", device: name) { hci_devid(name) }
        let descriptor = try HCIError.systemCall("hci_open_dev", device: name) { hci_open_dev(deviceID) }
        let socket = HCISocket(adopting: descriptor, device: name, framing: .packets)
        var info = hci_dev_info()
        _ = try HCIError.systemCall("hci_devinfo", device: name) { hci_devinfo(deviceID, &info) }
        guard hci_test_bit(Int32(HCI_UP), &info.flags) != 0 else {
            throw HCIError(device: name, problem: .adapterDown)
        }
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
        hci_filter_set_event(EVT_CMD_COMPLETE, &filter)
        hci_filter_set_event(EVT_CMD_STATUS, &filter)
        if leEvents { hci_filter_set_event(EVT_LE_META_EVENT, &filter) }
        _ = try HCIError.systemCall("setsockopt(HCI_FILTER)", device: name) {
            setsockopt(descriptor, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size))
        }
        return socket
    }

    /// The descriptor, or -1 once closed.
    public var descriptor: Int32 {
        openDescriptor.withLock { $0 }
    }

    /// Sends `command` as one H4 packet (`01 opcode length parameters`), whole; throws if the socket is closed or
    /// the kernel refuses it (a missing `CAP_NET_RAW` shows here as `permissionDenied`).
    public func send(_ command: HCICommand) throws(HCIError) {
        let packet = command.packet
        try openDescriptor.withLock { (descriptor: inout Int32) throws(HCIError) in
            guard descriptor >= 0 else { throw HCIError(device: device, problem: .connectionEnded) }
            var written = 0
            var isSocket = true
            while written < packet.count {
                let fd = descriptor
                let remaining = packet.count - written
                let count: Int
                do throws(HCIError) {
                    count = try HCIError.systemCall("write", device: device) {
                        packet.withUnsafeBytes { bytes in
                            // MSG_NOSIGNAL: a vanished peer is an error to report, not a SIGPIPE that kills the node.
                            isSocket
                                ? Glibc.send(fd, bytes.baseAddress! + written, remaining, Int32(MSG_NOSIGNAL))
                                : Glibc.write(fd, bytes.baseAddress! + written, remaining)
                        }
                    }
                } catch let error where isSocket && error.problem == .systemCall(name: "write", errno: ENOTSOCK) {
                    isSocket = false  // a pipe or a UART: plain write
                    continue
                }
                written += count
            }
        }
    }

    /// Closes the descriptor; later sends fail with `connectionEnded`. Calling it again does nothing.
    public func close() {
        let descriptor = openDescriptor.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }
}
