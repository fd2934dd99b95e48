import BeaconMeshService
import Foundation
import Synchronization

/// Loopback TCP ports for test servers.
public enum FreePort {
    /// Every port `next()` has handed out in this process: parallel tests never get the same one.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A TCP port on 127.0.0.1 that was free a moment ago and that no other caller in this process has been given.
    ///
    /// The kernel's answer to binding port 0 is free only until someone binds it: tests running in parallel each pick
    /// a port and bind it seconds later (a TLS broker first makes its certificates), so the kernel could give two of
    /// them the same port. Another process could still take it before the caller binds it; the brokers' `start`
    /// checks that the listener is their own process (`isListening(port:processID:)`).
    public static func next() throws -> Int {
        for _ in 0..<1000 {
            let port = try kernelFreePort()
            let isNew = handedOut.withLock { $0.insert(port).inserted }
            if isNew { return port }
        }
        throw TestSupportError("no loopback port left that this test process has not already handed out")
    }

    /// The kernel's answer to binding 127.0.0.1:0.
    private static func kernelFreePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket() failed: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestSupportError("bind(127.0.0.1:0) failed: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestSupportError("getsockname failed: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
    public static func isAccepting(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0
    }

    /// Whether process `processID` itself listens on TCP `port` (IPv4) right now — not merely someone.
    ///
    /// A server whose port was taken by another program exits with "address in use", while `isAccepting` says yes
    /// because the other program answers; clients then talk to the wrong server. This looks up the listening socket
    /// in `/proc/net/tcp` and finds it among the process's open files.
    public static func isListening(port: Int, processID: pid_t) -> Bool {
        let inodes = listeningSocketInodes(port: port)
        guard !inodes.isEmpty else { return false }
        let folder = "/proc/\(processID)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return false }
        return descriptors.contains { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + descriptor),
                target.hasPrefix("socket:[")
            else { return false }
            return inodes.contains(String(target.dropFirst("socket:[".count).dropLast()))
        }
    }

    /// The inodes of IPv4 TCP sockets in the LISTEN state on `port`, from `/proc/net/tcp`.
    static func listeningSocketInodes(port: Int) -> Set<String> {
        // Read to its end: Foundation's `String(contentsOfFile:)` reads one page, 26 sockets (`WholeFile`).
        guard let table = WholeFile.read("/proc/net/tcp") else { return [] }
        let portSuffix = ":" + String(format: "%04X", port)
        var inodes = Set<String>()
        // Columns: sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
        for line in table.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 9, columns[1].hasSuffix(portSuffix), columns[3] == "0A" else { continue }
            inodes.insert(String(columns[9]))
        }
        return inodes
    }
}
