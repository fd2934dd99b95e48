import CMosquitto
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension MQTTClient {
    /// Breaks the TCP connection without sending DISCONNECT, as a crash or a pulled cable would (tests only:
    /// reachable with `@testable import`). The broker then publishes the last will; the client reconnects.
    func breakConnectionForTesting() {
        let socket = mosquitto_socket(handle.pointer)
        if socket >= 0 {
            // shutdown, not close: the descriptor stays owned by libmosquitto, so it cannot be reused under it.
            _ = shutdown(socket, Int32(SHUT_RDWR))
        }
    }
}

extension MQTTClient {
    /// Whether the connection's socket has Nagle's algorithm off (`TCP_NODELAY`); `nil` while there is no socket
    /// (tests only: reachable with `@testable import`).
    var socketSendsWithoutDelayForTesting: Bool? {
        let socket = mosquitto_socket(handle.pointer)
        guard socket >= 0 else { return nil }
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length) == 0 else { return nil }
        return value != 0
    }
}

extension MQTTClient {
    /// How many packets the network thread has read as part of a backlog, without a `select` before each (tests
    /// only: reachable with `@testable import`).
    var backlogReadsForTesting: Int { loop.backlogReads.load(ordering: .relaxed) }
}

extension MQTTClient {
    /// Whether the loop can see the decrypted bytes TLS holds: the connection has an OpenSSL session and `SSL_pending`
    /// is found in the loaded libssl (tests only: reachable with `@testable import`).
    var seesTLSPendingBytesForTesting: Bool {
        mosquitto_ssl_get(handle.pointer) != nil && dlsym(nil, "SSL_pending") != nil
    }
}
