import BeaconMeshCore
import Glibc

/// Why opening or talking to a Bluetooth adapter failed; `description` is one line telling a store's IT person
/// what to do about it.
///
/// Every system call on an HCI socket goes through `HCIError.systemCall(_:device:_:)`, which reads `errno` right
/// after the call and turns it into one of these problems (the funnel, as in swift-nio's `System.swift`).
public struct HCIError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as far as the program can tell.
    public enum Problem: Hashable, Sendable {
        /// The kernel has no Bluetooth support: `socket(AF_BLUETOOTH)` failed with `EAFNOSUPPORT`.
        case bluetoothUnavailable
        /// The kernel knows no adapter of that name (`ENODEV`).
        case noSuchAdapter
        /// The name is not of the form `hci0`, `hci1`, ….
        case invalidAdapterName
        /// The process may not use the adapter raw (`EPERM`, `EACCES`): it needs `CAP_NET_RAW` and `CAP_NET_ADMIN`.
        case permissionDenied
        /// The adapter is powered down (`ENETDOWN`, or the kernel reports it is not up).
        case adapterDown
        /// Another program holds the adapter: `EBUSY`, or the controller refused `command` as "disallowed"
        /// (it is already scanning or advertising for someone else).
        case busy(command: HCIOpcode?)
        /// The controller refused `command` with `status`.
        case commandFailed(command: HCIOpcode, status: HCIStatusCode)
        /// The controller did not answer `command` within `timeout`.
        case noAnswer(command: HCIOpcode, timeout: Duration)
        /// The connection to the adapter ended (the socket was closed, or the adapter went away).
        case connectionEnded
        /// Another system call failed: its name and `errno`.
        case systemCall(name: String, errno: Int32)
    }

    /// The adapter's name, e.g. `hci0`.
    public var device: String
    public var problem: Problem

    public init(device: String, problem: Problem) {
        self.device = device
        self.problem = problem
    }

    /// The problem a failed system call `name` with error `code` means for adapter `device`.
    public init(device: String, call name: String, errno code: Int32) {
        self.device = device
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT: problem = .bluetoothUnavailable
        case ENODEV, ENXIO: problem = .noSuchAdapter
        case EPERM, EACCES: problem = .permissionDenied
        case ENETDOWN, EHOSTDOWN: problem = .adapterDown
        case EBUSY, EALREADY: problem = .busy(command: nil)
        default: problem = .systemCall(name: name, errno: code)
        }
    }

    /// The error for a controller's refusal of `command`: "command disallowed" means someone else is using the
    /// adapter; any other status is reported as it is.
    public init(device: String, command: HCIOpcode, status: HCIStatusCode) {
        self.device = device
        problem =
            status == .commandDisallowed || status == .controllerBusy
            ? .busy(command: command) : .commandFailed(command: command, status: status)
    }

    public var description: String {
        switch problem {
        case .bluetoothUnavailable:
            return "no Bluetooth adapter \(device) (is the kernel's Bluetooth enabled? `hciconfig -a`)"
        case .noSuchAdapter:
            return "no Bluetooth adapter \(device) (is it plugged in? `hciconfig -a` lists the adapters there are)"
        case .invalidAdapterName:
            return "\"\(device)\" is not a Bluetooth adapter name: use hci0, hci1, … (`hciconfig -a` lists them)"
        case .permissionDenied:
            return "permission denied opening \(device): run as root or grant CAP_NET_RAW,CAP_NET_ADMIN "
                + "(sudo setcap cap_net_raw,cap_net_admin+eip \"$(command -v beacon-scanner)\")"
        case .adapterDown:
            return "\(device) is down: bring it up with `sudo hciconfig \(device) up` (or `bluetoothctl power on`)"
        case .busy(let command):
            let refusal = command.map { " (it refused \($0))" } ?? ""
            return "\(device) is busy: another program, usually bluetoothd, is scanning or advertising on it\(refusal); "
                + "stop it (`bluetoothctl scan off`, or `sudo systemctl stop bluetooth`) and try again"
        case .commandFailed(let command, let status):
            return "\(device) refused \(command): \(status)"
        case .noAnswer(let command, let timeout):
            return "\(device) did not answer \(command) within \(DurationText.format(timeout)): the adapter may be hung; "
                + "reset it with `sudo hciconfig \(device) reset`"
        case .connectionEnded:
            return "the connection to \(device) ended: the adapter was removed or switched off (check `hciconfig -a`)"
        case .systemCall(let name, let code):
            return "\(device): \(name) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// Runs one system call, retrying when a signal interrupts it; a negative result becomes the error for `errno`,
    /// read immediately after the call.
    @inline(__always)
    static func systemCall<Result: SignedInteger>(
        _ name: String, device: String, _ body: () -> Result
    ) throws(HCIError) -> Result {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw HCIError(device: device, call: name, errno: code)
        }
    }
}
