import Foundation
import Synchronization

/// A TCP relay on a free loopback port in front of a server (a PostgreSQL, a broker) that a test can cut and
/// restore, the way a pulled cable or a dead link between a store and head office does.
///
/// `cut()` stops forwarding at once and without a word (no FIN, no RST): bytes sent on either side go nowhere, and
/// new connections are taken but never answered. `restore()` drops the connections held while cut (as a peer
/// that timed them out would) and forwards new ones again.
public final class TCPRelay: Sendable {
    /// The port clients connect to instead of the server's.
    public let port: Int
    private let target: Int
    private let listener: Int32
    private struct State {
        var cut = false
        var stopped = false
        /// Relayed connections (both ends), closed by their pumps.
        var live: Set<Int32> = []
        /// Connections taken while cut and never answered.
        var held: Set<Int32> = []
    }
    private let state = Mutex(State())

    /// Starts relaying 127.0.0.1:`port` (a free one) to 127.0.0.1:`target`.
    public init(to target: Int) throws {
        self.target = target
        port = try FreePort.next()
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestSupportError("socket() failed: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw TestSupportError("the relay cannot listen on 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "tcp-relay-accept"
        thread.start()
    }

    /// Stops forwarding, silently.
    public func cut() { state.withLock { $0.cut = true } }

    /// Forwards again; connections made or held while cut are closed.
    public func restore() {
        let (live, held) = state.withLock { state in
            state.cut = false
            defer { state.held = [] }
            return (state.live, state.held)
        }
        for fd in live { shutdown(fd, Int32(SHUT_RDWR)) }
        for fd in held { close(fd) }
    }

    /// Closes the relay and every connection through it.
    public func stop() {
        let (live, held) = state.withLock { state in
            state.stopped = true
            defer { state.held = [] }
            return (state.live, state.held)
        }
        for fd in live { shutdown(fd, Int32(SHUT_RDWR)) }
        for fd in held { close(fd) }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            if state.withLock({ $0.stopped }) {
                close(client)
                return
            }
            let cut = state.withLock { state in
                if state.cut { state.held.insert(client) }
                return state.cut
            }
            if cut { continue }  // taken, never answered
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if connected != 0 {
                close(server)
                close(client)
                continue
            }
            state.withLock { $0.live.formUnion([client, server]) }
            let pair = Pair()
            for (from, to) in [(client, server), (server, client)] {
                let pump = Thread { [self] in self.pump(from: from, to: to, pair: pair) }
                pump.name = "tcp-relay-pump"
                pump.start()
            }
        }
    }

    /// The two directions of one connection: the second to finish closes both sockets.
    private final class Pair: Sendable {
        let finished = Atomic<Int>(0)
    }

    /// Copies bytes from one socket to the other until either closes; while cut, reads and drops them.
    private func pump(from: Int32, to: Int32, pair: Pair) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            if state.withLock({ $0.cut }) { continue }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { break }
                sent += written
            }
            if sent < count { break }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
        guard pair.finished.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == 2 else { return }
        state.withLock { $0.live.subtract([from, to]) }
        close(from)
        close(to)
    }
}
