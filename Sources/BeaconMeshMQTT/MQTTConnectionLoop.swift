import BeaconMeshThreads
import CMosquitto
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The client's network loop on its own thread: it does the socket I/O, keep-alive and callbacks, and after any
/// failure — refused, lost, a TLS or protocol error, a keep-alive timeout — reconnects with backoff until stopped.
///
/// Why not `mosquitto_loop_start`: libmosquitto's own loop thread (`mosquitto_loop_forever`) ends for good on a TLS
/// or protocol error during a later reconnect (measured on 2.0.11: a broker that comes back with a certificate from
/// another CA), and the client then stays disconnected. This loop calls `mosquitto_loop` (select on the socket and
/// libmosquitto's wake-up pipe, read, write, keep-alive) while there is a socket, and `mosquitto_reconnect_async`
/// after the backoff while there is none. The client is marked `threaded` so that publishing from other threads only
/// queues packets and wakes this loop. Keep-alive, TLS, the last will, QoS 1 resending and the client's
/// re-subscription in `on_connect` all stay libmosquitto's and the callback context's, as with its own thread.
///
/// A backlog is read faster than `mosquitto_loop` alone would: it reads one packet per `select`, plus one byte of
/// its wake-up pipe (every acknowledgement queued writes one), which cost more than the packet itself. While
/// connected, each turn goes on reading with `mosquitto_loop_read` until the socket has nothing more (at most
/// `backlogBurst` packets), writing the acknowledgement of each with `mosquitto_loop_write`.
final class MQTTConnectionLoop: Sendable {
    private let handle: MosquittoHandle
    private let context: MQTTCallbackContext
    private let logger: Logger
    private let reconnectDelayMin: Duration
    private let reconnectDelayMax: Duration
    /// `true` once the client is closing: no more reconnects. Held around each reconnect so `close` cannot race one.
    private let closing = Mutex(false)
    /// `true` once the thread should end.
    private let stopRequested = Atomic(false)
    private let thread = Mutex<DedicatedThread?>(nil)
    /// How many packets the loop has read on after a `mosquitto_loop`, without a `select` (tests look at it).
    let backlogReads = Atomic<Int>(0)

    /// How long one `mosquitto_loop` waits for traffic before looking at keep-alive and the stop flag again.
    static let pollTimeoutMilliseconds: Int32 = 1000
    /// How often a backoff wait looks at the stop flag.
    static let sleepSlice: Duration = .milliseconds(20)
    /// How many more packets one turn reads while the socket keeps delivering, before the next `mosquitto_loop`
    /// (keep-alive, the wake-up pipe, writes).
    static let backlogBurst = 64

    init(handle: MosquittoHandle, context: MQTTCallbackContext, logger: Logger, reconnectDelayMin: Duration, reconnectDelayMax: Duration) {
        self.handle = handle
        self.context = context
        self.logger = logger
        self.reconnectDelayMin = reconnectDelayMin
        self.reconnectDelayMax = reconnectDelayMax
    }

    /// The wait before reconnect attempt `attempt` (1, 2, …): `min × attempt²`, at most `max` (libmosquitto's backoff).
    static func backoff(attempt: Int, minimum: Duration, maximum: Duration) -> Duration {
        let factor = min(max(attempt, 1), 1_000)
        return min(minimum * (factor * factor), maximum)
    }

    /// Starts the thread. A connection attempt may already be under way (`mosquitto_connect_async`); without a
    /// socket the loop begins with a backoff wait and a reconnect.
    func start() throws(MQTTError) {
        do {
            let started = try DedicatedThread(name: "mqtt-network") { [self] in run() }
            thread.withLock { $0 = started }
        } catch {
            throw .library(
                call: "pthread_create(mqtt-network)", code: MOSQ_ERR_ERRNO.rawValue, systemError: error.code,
                reason: systemErrorText(error.code))
        }
    }

    /// Stops reconnecting, then runs `body` (e.g. `mosquitto_disconnect`) while no reconnect can start; returns its result.
    func close<T>(_ body: () -> T) -> T {
        closing.withLock { closing in
            closing = true
            return body()
        }
    }

    /// Ends the thread and waits for it (at most about one poll timeout). Call `close` first.
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        let running = thread.withLock { $0 }
        running?.join()
    }

    // MARK: The thread

    private func run() {
        var attempt = 0  // failed or pending reconnect attempts since the last accepted connection
        while !stopRequested.load(ordering: .acquiring) {
            guard mosquitto_socket(handle.pointer) >= 0 else {
                if closing.withLock({ $0 }) {
                    sleep(Self.sleepSlice)
                    continue
                }
                attempt += 1
                let delay = Self.backoff(attempt: attempt, minimum: reconnectDelayMin, maximum: reconnectDelayMax)
                guard sleep(delay) else { return }
                reconnect(attempt: attempt)
                continue
            }
            let handled = context.packetsHandled.load(ordering: .relaxed)
            let code = mosquitto_loop(handle.pointer, Self.pollTimeoutMilliseconds, 1)
            let connected = context.state.withLock { $0.isConnected }
            if attempt > 0 && connected { attempt = 0 }
            // A turn that took a packet may have more behind it (a turn woken only by the pipe has not).
            if code == MOSQ_ERR_SUCCESS.rawValue && connected && context.packetsHandled.load(ordering: .relaxed) != handled {
                readBacklog()
            }
            if code != MOSQ_ERR_SUCCESS.rawValue && code != MOSQ_ERR_NO_CONN.rawValue && mosquitto_socket(handle.pointer) >= 0 {
                // An error that left the socket open (select failing, say): do not spin on it.
                logger.debug("network loop error; retrying", metadata: ["mqtt.error": "\(libraryErrorText(code))"])
                sleep(.milliseconds(10))
            }
        }
    }

    /// Reads on while the socket delivers (up to `backlogBurst` packets, no `select` between them), writing what each
    /// read queued (its acknowledgement). A read or write that fails has closed the socket (libmosquitto reports the
    /// loss through `on_disconnect`): it ends here, and the next turn reconnects.
    ///
    /// A read that took no message or acknowledgement ends it: nothing more was there, or only part of a packet
    /// (`mosquitto_loop` waits for the rest). `errno` cannot tell: once the wake-up pipe is full, every
    /// acknowledgement queued leaves `EAGAIN` there — which also stops `mosquitto_loop_read` from reading on while
    /// TLS holds decrypted bytes. So while it does, this reads on whatever the count (a `select` would not see
    /// those bytes, and a broker that packs several packets into one TLS record would wait for their acknowledgements).
    private func readBacklog() {
        var reads = 0
        while reads < Self.backlogBurst || tlsHoldsBytes() {
            reads += 1
            let handled = context.packetsHandled.load(ordering: .relaxed)
            guard mosquitto_loop_read(handle.pointer, 1) == MOSQ_ERR_SUCCESS.rawValue, mosquitto_socket(handle.pointer) >= 0
            else { return }
            let tookPacket = context.packetsHandled.load(ordering: .relaxed) != handled
            if tookPacket { backlogReads.add(1, ordering: .relaxed) }
            // Acknowledge at once: a broker sends at most so many unacknowledged messages (`max_inflight_messages`,
            // 20 by default), and the next only as acknowledgements come back.
            guard writeQueued() else { return }
            if !tookPacket && !tlsHoldsBytes() { break }
        }
    }

    /// Writes what is queued, if anything; `false` if that lost the connection (or it was closed meanwhile).
    private func writeQueued() -> Bool {
        guard mosquitto_want_write(handle.pointer) else { return true }
        return mosquitto_loop_write(handle.pointer, 1) == MOSQ_ERR_SUCCESS.rawValue && mosquitto_socket(handle.pointer) >= 0
    }

    /// Whether a TLS connection has decrypted bytes not read yet (none without TLS).
    private func tlsHoldsBytes() -> Bool {
        beaconmesh_tls_pending(mosquitto_ssl_get(handle.pointer)) > 0
    }

    /// One reconnect attempt; a failure is only logged — the next wait and attempt follow.
    private func reconnect(attempt: Int) {
        closing.withLock { closing in
            if closing { return }
            let status = mosquittoStatus { mosquitto_reconnect_async(handle.pointer) }
            if status.succeeded {
                logger.debug("reconnecting", metadata: ["mqtt.attempt": "\(attempt)"])
            } else {
                let error = status.error(call: "mosquitto_reconnect_async")
                let level: Logger.Level = attempt == 1 ? .info : .debug
                logger.log(
                    level: level, "broker not reachable; retrying",
                    metadata: [
                        "mqtt.attempt": "\(attempt)", "mqtt.error": "\(error)",
                        "mqtt.nextAttemptIn":
                            "\(Self.backoff(attempt: attempt + 1, minimum: reconnectDelayMin, maximum: reconnectDelayMax))",
                    ])
            }
        }
    }

    /// Sleeps `duration` in short slices; `false` if a stop was requested meanwhile.
    @discardableResult
    private func sleep(_ duration: Duration) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: duration)
        while clock.now < deadline {
            if stopRequested.load(ordering: .acquiring) { return false }
            let left = min(deadline - clock.now, Self.sleepSlice)
            let (seconds, attoseconds) = left.components
            // An interrupted sleep just ends the slice early; the deadline decides.
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
        return !stopRequested.load(ordering: .acquiring)
    }
}
