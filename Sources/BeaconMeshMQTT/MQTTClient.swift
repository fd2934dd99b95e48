import BeaconMeshThreads
import CMosquitto
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An MQTT client that stays connected: it connects in the background, reconnects forever with backoff, re-subscribes
/// after every reconnect, and delivers received messages as an `AsyncStream`.
///
/// Life cycle: `init` → `start()` → use → `disconnect(timeout:)`. All methods may be called from any thread or task.
///
/// Delivery guarantees, as measured against libmosquitto 2.0.11 and mosquitto 2.0.11:
/// - QoS 1 `publish` while disconnected (or before the first connection) succeeds: libmosquitto keeps the message
///   and sends it after the next CONNACK. The returned id is reported in `acknowledgements()` once the broker has it.
///   Such messages live in this process only: they are lost if the process ends first.
/// - QoS 0 `publish` while disconnected throws `MQTTError.notConnected`: the message is gone.
///
/// Reconnecting: the client's own network thread (`MQTTConnectionLoop`) reconnects with backoff
/// (`reconnectDelayMin` × attempt², at most `reconnectDelayMax`) after any failure — the broker down, refusing or gone,
/// a keep-alive timeout, a TLS or protocol error — from the first attempt on, until `disconnect`. After each accepted
/// connection it re-subscribes, publishes `configuration.announcement` (if any) and resends queued QoS 1 messages.
public final class MQTTClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: MQTTConfiguration

    /// Every message received on any subscription, in arrival order. One consumer only; it ends after `disconnect`.
    public let messages: MQTTMessages

    let handle: MosquittoHandle
    private let context: MQTTCallbackContext
    private let logger: Logger
    /// The network thread: I/O, keep-alive, callbacks and reconnecting.
    let loop: MQTTConnectionLoop

    /// Makes a client (no network traffic yet); throws `MQTTError` for a configuration that cannot work.
    ///
    /// TLS (CA file or the system trust store), user name and password and the last will are set here; `start()` connects.
    public init(configuration: MQTTConfiguration, logger: Logger) throws(MQTTError) {
        try configuration.validate()
        if let caFile = configuration.caFile {
            let (readable, savedErrno) = withSavedErrno { access(caFile, R_OK) }
            guard readable == 0 else {
                throw .invalidConfiguration("CA file \(caFile) cannot be read: \(systemErrorText(savedErrno))")
            }
        }
        MQTTLibrary.initialize()

        var logger = logger
        logger[metadataKey: "mqtt.broker"] = "\(configuration.broker)"
        if let clientID = configuration.clientID {
            logger[metadataKey: "mqtt.clientID"] = "\(clientID)"
        }
        let inbox = MQTTInbox(BoundedQueue(capacity: configuration.incomingBufferLimit))
        let context = MQTTCallbackContext(logger: logger, inbox: inbox, announcement: configuration.announcement)

        // The C side owns one reference from here on; it is released exactly once, after mosquitto_destroy.
        let userdata = Unmanaged.passRetained(context).toOpaque()
        let (made, savedErrno) = withSavedErrno { mosquitto_new(configuration.clientID, configuration.cleanSession, userdata) }
        guard let pointer = made else {
            Unmanaged<MQTTCallbackContext>.fromOpaque(userdata).release()
            inbox.close()
            throw .library(
                call: "mosquitto_new", code: MOSQ_ERR_ERRNO.rawValue, systemError: savedErrno,
                reason: systemErrorText(savedErrno))
        }
        do {
            try Self.apply(configuration, to: pointer)
        } catch {
            mosquitto_destroy(pointer)
            Unmanaged<MQTTCallbackContext>.fromOpaque(userdata).release()
            inbox.close()
            throw error
        }
        MQTTCallbackContext.installCallbacks(on: pointer)

        self.configuration = configuration
        self.messages = MQTTMessages(inbox: inbox)
        self.handle = MosquittoHandle(pointer: pointer)
        self.context = context
        self.logger = logger
        self.loop = MQTTConnectionLoop(
            handle: handle, context: context, logger: logger,
            reconnectDelayMin: configuration.reconnectDelayMin, reconnectDelayMax: configuration.reconnectDelayMax)
    }

    /// Protocol, reconnect policy, TLS, credentials and last will: everything libmosquitto needs before connecting.
    private static func apply(_ configuration: MQTTConfiguration, to mosq: OpaquePointer) throws(MQTTError) {
        let version: Int32 =
            switch configuration.protocolVersion {
            case .v3_1: MQTT_PROTOCOL_V31
            case .v3_1_1: MQTT_PROTOCOL_V311
            }
        try mosquittoCall("mosquitto_int_option(protocol version)") {
            mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version)
        }
        // Messages are small and wanted now: without this, Nagle's algorithm holds a packet written right after
        // another until the broker's delayed ACK (40 ms on Linux) — measured as the coordinator's p99 event latency.
        try mosquittoCall("mosquitto_int_option(TCP_NODELAY)") {
            mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, configuration.sendsWithoutDelay ? 1 : 0)
        }
        // Our own network thread runs the loop (MQTTConnectionLoop): publishing from other threads only queues
        // packets and wakes it, instead of writing to the socket from the caller's thread.
        try mosquittoCall("mosquitto_threaded_set") { mosquitto_threaded_set(mosq, true) }
        if configuration.broker.usesTLS {
            if let caFile = configuration.caFile {
                try mosquittoCall("mosquitto_tls_set(CA file \(caFile))") {
                    mosquitto_tls_set(mosq, caFile, nil, nil, nil, nil)
                }
            } else {
                // The system's trusted certificates, named as a file or folder: libmosquitto's reconnect ignores
                // MOSQ_OPT_TLS_USE_OS_CERTS (upstream issue #2820), so a node trusting the system store never
                // reconnected after its broker's first restart.
                let store = SystemTrustStore.locate()
                try mosquittoCall("mosquitto_tls_set(the system's trusted certificates, \(store))") {
                    mosquitto_tls_set(mosq, store.file, store.folder, nil, nil, nil)
                }
            }
        }
        if let username = configuration.username {
            try mosquittoCall("mosquitto_username_pw_set") {
                mosquitto_username_pw_set(mosq, username, configuration.password)
            }
        }
        if let will = configuration.lastWill {
            try mosquittoCall("mosquitto_will_set(\(will.topic))") {
                will.payload.withUnsafeBytes { bytes in
                    mosquitto_will_set(mosq, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain)
                }
            }
        }
    }

    /// Starts connecting in the background and returns at once; the client then keeps (re)connecting until `disconnect`.
    ///
    /// A broker that is down or unreachable is not an error: the client retries with backoff and reports success
    /// through `connectionEvents()` / `waitUntilConnected(timeout:)`. Calling `start()` again does nothing.
    /// Throws `MQTTError` only for problems a retry cannot fix (invalid arguments, TLS set-up) or after `disconnect`.
    public func start() throws(MQTTError) {
        let shouldStart = try context.state.withLock { state throws(MQTTError) -> Bool in
            switch state.lifecycle {
            case .created:
                state.lifecycle = .started
                return true
            case .started:
                return false
            case .closing, .closed:
                throw .closed
            }
        }
        guard shouldStart else { return }

        // A connection attempt now; whatever happens to it (and to every later one) the network thread follows up.
        let broker = configuration.broker
        let status = mosquittoStatus {
            mosquitto_connect_async(
                handle.pointer, broker.host, Int32(broker.port), Int32(configuration.keepAlive.wholeSecondsRoundedUp))
        }
        if !status.succeeded {
            let error = status.error(call: "mosquitto_connect_async to \(broker)")
            guard Self.isWorthRetrying(status.code) else {
                context.state.withLock { $0.lifecycle = .created }
                throw error
            }
            context.report(.notReachableYet("\(error)"))
        }
        do {
            try loop.start()
        } catch {
            _ = mosquitto_disconnect(handle.pointer)
            context.state.withLock { $0.lifecycle = .created }
            throw error
        }
        logger.debug("MQTT client started")
    }

    /// Return codes of a connection attempt that are worth retrying: the broker or network may recover.
    ///
    /// TLS errors count: against a local broker the handshake completes inside the connect call, so a certificate
    /// the broker will fix (or a broker still loading its certificate) shows up here; OpenSSL's reason is logged
    /// by libmosquitto and passed on as a warning.
    private static func isWorthRetrying(_ code: Int32) -> Bool {
        [
            MOSQ_ERR_ERRNO, MOSQ_ERR_EAI, MOSQ_ERR_CONN_REFUSED, MOSQ_ERR_NO_CONN, MOSQ_ERR_CONN_LOST,
            MOSQ_ERR_TIMEOUT, MOSQ_ERR_LOOKUP, MOSQ_ERR_TLS, MOSQ_ERR_TLS_HANDSHAKE,
        ].contains { $0.rawValue == code }
    }

    // MARK: Connection state

    /// Whether the broker has accepted our connection (CONNACK) and it has not been lost since.
    public var isConnected: Bool {
        context.state.withLock { $0.isConnected }
    }

    /// A new stream of connection changes from now on (no replay of the current state — read `isConnected` for that).
    ///
    /// Each call gives an independent stream. It ends when the client is disconnected; cancel the task that iterates
    /// it to stop listening earlier. Up to 64 unread events are kept, older ones are dropped.
    public func connectionEvents() -> AsyncStream<MQTTConnectionEvent> {
        context.makeConnectionEventStream()
    }

    /// Waits until the client is connected; `false` if `timeout` passes first or the client is disconnected.
    public func waitUntilConnected(timeout: Duration) async -> Bool {
        await context.waitUntil(timeout: timeout) { $0.isConnected }
    }

    // MARK: Publishing

    /// Publishes `payload` to `topic` and returns the message id that `acknowledgements()` will report.
    ///
    /// QoS 1: queued and retried until the broker acknowledges it, also across reconnects and while disconnected.
    /// QoS 0: sent once; throws `MQTTError.notConnected` when there is no connection. Throws `MQTTError.closed` after
    /// `disconnect`, `.library` for an invalid topic or an oversized payload.
    @discardableResult
    public func publish(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false
    ) throws(MQTTError) -> MQTTMessageID {
        guard context.state.withLock({ $0.lifecycle.acceptsWork }) else { throw .closed }
        return try sendPublish(topic: topic, payload: payload, qos: qos, retain: retain)
    }

    /// Publishes a UTF-8 string; see `publish(topic:payload:qos:retain:)`.
    @discardableResult
    public func publish(
        topic: String, string: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false
    ) throws(MQTTError) -> MQTTMessageID {
        try publish(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    @discardableResult
    private func sendPublish(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool) throws(MQTTError) -> MQTTMessageID {
        var mid: Int32 = 0
        let status = payload.withUnsafeBytes { bytes in
            mosquittoStatus {
                mosquitto_publish(
                    handle.pointer, &mid, topic, Int32(clamping: bytes.count), bytes.baseAddress, qos.rawValue, retain)
            }
        }
        switch status.code {
        case MOSQ_ERR_SUCCESS.rawValue:
            break
        case MOSQ_ERR_NO_CONN.rawValue where qos != .atMostOnce:
            // Measured on 2.0.11: the message was queued anyway and goes out after the next CONNACK.
            logger.debug("queued a message while disconnected", metadata: ["mqtt.topic": "\(topic)", "mqtt.mid": "\(mid)"])
        case MOSQ_ERR_NO_CONN.rawValue:
            throw .notConnected(topic: topic)
        default:
            throw status.error(call: "mosquitto_publish to \(topic)")
        }
        let id = MQTTMessageID(rawValue: mid)
        context.recordPublished(id, qos: qos)
        return id
    }

    /// A new stream of the ids of published messages as they are acknowledged (QoS 1: PUBACK received; QoS 0: written).
    ///
    /// An acknowledgement can arrive before `publish` has returned its id: record ids and process this stream in the
    /// same actor (or check `isAcknowledged(_:)`). Each call gives an independent stream that ends after `disconnect`.
    public func acknowledgements() -> AsyncStream<MQTTMessageID> {
        context.makeAcknowledgementStream()
    }

    /// Whether the message with this id (returned by `publish`) is no longer waiting for the broker.
    public func isAcknowledged(_ id: MQTTMessageID) -> Bool {
        context.state.withLock { $0.unacknowledged[id] == nil }
    }

    /// Waits until the broker has acknowledged message `id`; `false` after `timeout` or if the client is disconnected.
    public func waitForAcknowledgement(of id: MQTTMessageID, timeout: Duration) async -> Bool {
        await context.waitUntil(timeout: timeout) { $0.unacknowledged[id] == nil }
    }

    /// How many QoS 1 messages are waiting for the broker's acknowledgement (including those queued while disconnected).
    public var unacknowledgedCount: Int {
        context.state.withLock { $0.unacknowledgedAtLeastOnce }
    }

    // MARK: Subscribing

    /// Subscribes to `filter` (wildcards `+` and `#` allowed) now if connected, and again after every reconnect.
    ///
    /// Messages arrive on `messages`. May be called before `start()`. Throws for an invalid filter or after `disconnect`.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) throws(MQTTError) {
        try MQTTTopicFilter.validateFilter(filter)
        let connected = try context.state.withLock { state throws(MQTTError) -> Bool in
            guard state.lifecycle.acceptsWork else { throw .closed }
            state.remember(.init(filter: filter, qos: qos))
            return state.isConnected
        }
        guard connected else { return }  // on_connect subscribes it
        var mid: Int32 = 0
        let status = mosquittoStatus { mosquitto_subscribe(handle.pointer, &mid, filter, qos.rawValue) }
        switch status.code {
        case MOSQ_ERR_SUCCESS.rawValue:
            context.recordSubscribe(mid: mid, filter: filter)
        case MOSQ_ERR_NO_CONN.rawValue:
            break  // the connection dropped just now; on_connect subscribes again after the reconnect
        default:
            throw status.error(call: "mosquitto_subscribe to \(filter)")
        }
    }

    /// Waits until the broker has acknowledged (SUBACK) the subscription to `filter` on the current connection;
    /// `false` after `timeout`, e.g. while disconnected. A subscription the broker refuses is logged at `error`.
    public func waitUntilSubscribed(_ filter: String, timeout: Duration) async -> Bool {
        await context.waitUntil(timeout: timeout) { $0.acknowledgedSubscriptions.contains(filter) }
    }

    /// Stops receiving messages for `filter` (exactly as passed to `subscribe`) and forgets it for reconnects.
    public func unsubscribe(_ filter: String) throws(MQTTError) {
        let connected = try context.state.withLock { state throws(MQTTError) -> Bool in
            guard state.lifecycle.acceptsWork else { throw .closed }
            state.subscriptions.removeAll { $0.filter == filter }
            state.acknowledgedSubscriptions.remove(filter)
            return state.isConnected
        }
        guard connected else { return }
        let status = mosquittoStatus { mosquitto_unsubscribe(handle.pointer, nil, filter) }
        guard status.succeeded || status.is(MOSQ_ERR_NO_CONN) else {
            throw status.error(call: "mosquitto_unsubscribe from \(filter)")
        }
    }

    // MARK: Shutting down

    /// Shuts down cleanly within about `timeout`: publishes `finalMessage` (if any), waits until QoS 1 messages are
    /// acknowledged, sends DISCONNECT (so the broker does not publish the last will), stops the network thread and frees
    /// everything. Safe to call if never started or never connected, and more than once (later calls return at once).
    ///
    /// `finalMessage.retained` is used as the retain flag. Messages still unacknowledged at the deadline are lost;
    /// what went wrong is returned. Afterwards `messages` and all observer streams end and every method throws
    /// `MQTTError.closed`.
    @discardableResult
    public func disconnect(timeout: Duration = .seconds(5), finalMessage: MQTTMessage? = nil) async -> [MQTTTrouble] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        let previous = context.state.withLock { state in
            let previous = state.lifecycle
            if previous.acceptsWork { state.lifecycle = .closing }
            return previous
        }
        switch previous {
        case .closing, .closed:
            return []
        case .created:
            tearDown()
            return []
        case .started:
            break
        }
        var troubles: [MQTTTrouble] = []

        if let finalMessage {
            do {
                try sendPublish(
                    topic: finalMessage.topic, payload: finalMessage.payload,
                    qos: finalMessage.qos, retain: finalMessage.retained)
            } catch {
                troubles.append(.finalMessageNotPublished("\(error)"))
            }
        }
        let flushed = await context.waitUntil(timeout: max(.zero, deadline - clock.now)) { $0.unacknowledgedAtLeastOnce == 0 }
        if !flushed { troubles.append(.unacknowledgedAtClose(unacknowledgedCount)) }
        let code = loop.close { mosquitto_disconnect(handle.pointer) }
        if code == MOSQ_ERR_SUCCESS.rawValue {
            // Let the network thread write DISCONNECT and close the socket before it is stopped.
            let grace = min(max(.zero, deadline - clock.now), .seconds(1))
            _ = await context.waitUntil(timeout: grace) { !$0.isConnected }
        }
        // A network thread waiting for room in the inbox must give up before it can be joined.
        context.inbox.close()
        loop.stop()
        tearDown()
        for trouble in troubles { logger.debug("\(trouble)") }
        return troubles
    }

    /// Destroys the libmosquitto instance, then gives back the context reference C held, then ends all streams.
    /// Only after the network thread has stopped (or never ran).
    private func tearDown() {
        mosquitto_destroy(handle.pointer)
        Unmanaged.passUnretained(context).release()
        context.close()
    }

    deinit {
        let lifecycle = context.state.withLock { $0.lifecycle }
        switch lifecycle {
        case .closed:
            return
        case .started, .closing:
            // Dropped without disconnect(): say goodbye (no last will), stop the thread, then free.
            _ = loop.close { mosquitto_disconnect(handle.pointer) }
            context.inbox.close()
            loop.stop()
        case .created:
            break
        }
        tearDown()
    }
}

/// The `struct mosquitto *` of one client.
///
/// `@unchecked Sendable` because libmosquitto (built with thread support, as Debian's is) guards each instance with its
/// own mutexes: publish, subscribe and disconnect may be called from any thread while the network thread runs.
/// `MQTTClient` calls `mosquitto_destroy` exactly once, after the network thread has been joined.
struct MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
