import CMosquitto

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
