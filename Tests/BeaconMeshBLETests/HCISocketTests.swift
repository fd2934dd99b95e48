import BeaconMeshBLE
import BeaconMeshCore
import Foundation
import Testing

@Suite("Opening an adapter, and what its errors say")
struct HCISocketTests {
    /// Whether this kernel has Bluetooth sockets at all (the build machine's has not).
    static var kernelHasBluetooth: Bool {
        let probe = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1 /* BTPROTO_HCI */)
        if probe >= 0 { close(probe) }
        return probe >= 0 || errno != EAFNOSUPPORT
    }

    @Test("opening hci0 fails with one line saying what to do (this kernel has no Bluetooth)")
    func openingHCI0Fails() throws {
        do {
            let socket = try HCISocket.open(adapter: "hci0")
            socket.close()
            #expect(Self.kernelHasBluetooth, "opened hci0 on a kernel without Bluetooth?")
        } catch {
            if Self.kernelHasBluetooth {
                #expect(!error.description.contains("\n"))
            } else {
                #expect(error.problem == .bluetoothUnavailable)
                #expect(error.description == "no Bluetooth adapter hci0 (is the kernel's Bluetooth enabled? `hciconfig -a`)")
            }
        }
    }

    @Test("a name that is not hciN is refused before any system call")
    func badName() {
        for name in ["bt0", "hci", "hci-1", "hci0x", "HCI0"] {
            #expect(throws: HCIError(device: name, problem: .invalidAdapterName)) { try HCISocket.open(adapter: name) }
        }
        #expect(
            HCIError(device: "bt0", problem: .invalidAdapterName).description
                == "\"bt0\" is not a Bluetooth adapter name: use hci0, hci1, … (`hciconfig -a` lists them)")
    }

    @Test(
        "errno values become the problems an IT person can act on",
        arguments: [
            (EAFNOSUPPORT, "no Bluetooth adapter hci0 (is the kernel's Bluetooth enabled? `hciconfig -a`)"),
            (ENODEV, "no Bluetooth adapter hci0 (is it plugged in? `hciconfig -a` lists the adapters there are)"),
            (
                EPERM,
                "permission denied opening hci0: run as root or grant CAP_NET_RAW,CAP_NET_ADMIN "
                    + "(sudo setcap cap_net_raw,cap_net_admin+eip \"$(command -v beacon-scanner)\")"
            ),
            (
                EACCES,
                "permission denied opening hci0: run as root or grant CAP_NET_RAW,CAP_NET_ADMIN "
                    + "(sudo setcap cap_net_raw,cap_net_admin+eip \"$(command -v beacon-scanner)\")"
            ),
            (ENETDOWN, "hci0 is down: bring it up with `sudo hciconfig hci0 up` (or `bluetoothctl power on`)"),
            (
                EBUSY,
                "hci0 is busy: another program, usually bluetoothd, is scanning or advertising on it; "
                    + "stop it (`bluetoothctl scan off`, or `sudo systemctl stop bluetooth`) and try again"
            ),
            (EIO, "hci0: write failed: Input/output error (errno 5)"),
        ])
    func errnoMessages(code: Int32, message: String) {
        #expect(HCIError(device: "hci0", call: "write", errno: code).description == message)
    }

    @Test("a command refused with another status names the command and the status")
    func commandFailure() {
        let error = HCIError(device: "hci0", command: .leSetScanEnable, status: .invalidParameters)
        #expect(error.description == "hci0 refused LE Set Scan Enable (0x200C): invalid command parameters (status 0x12)")
    }

    @Test("an adopted socket sends whole H4 command packets and refuses to send once closed")
    func adoptedSocketSends() throws {
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        defer { close(pair.far) }
        let socket = HCISocket(adopting: pair.near, device: "pair", framing: .packets)
        try socket.send(.leSetScanEnable(true))
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(pair.far, $0.baseAddress, $0.count) }
        #expect(Array(buffer.prefix(max(0, count))) == [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00])
        socket.close()
        socket.close()
        #expect(throws: HCIError(device: "pair", problem: .connectionEnded)) { try socket.send(.reset) }
    }

    @Test("a descriptor that is no socket (a pipe, a UART) is written to plainly")
    func pipeSends() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let socket = HCISocket(adopting: ends[1], device: "uart", framing: .stream)
        try socket.send(.leReadLocalSupportedFeatures)
        try socket.send(.leSetScanEnable(false))
        socket.close()
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
        #expect(Array(buffer.prefix(max(0, count))) == [0x01, 0x03, 0x20, 0x00, 0x01, 0x0C, 0x20, 0x02, 0x00, 0x00])
    }
}
