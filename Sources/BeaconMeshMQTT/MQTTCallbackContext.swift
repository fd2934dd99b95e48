import BeaconMeshThreads
import CMosquitto
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What libmosquitto's callbacks reach through the `void *` user data: the shared state, the logger, the message stream.
///
/// `MQTTClient.init` hands one retained reference to C (`Unmanaged.passRetained`) and `MQTTClient` takes it back exactly
/// once, after `mosquitto_destroy`, when no callback can run any more. The callbacks run on the network thread;
/// they only copy data, update the state under the lock and yield into continuations. `Sendable`: every stored property
/// is `Sendable` (`Mutex` guards the mutable part).
final class MQTTCallbackContext: Sendable {
    let logger: Logger
    let state: Mutex<MQTTClientState>
    let inbox: MQTTInbox
    /// Published first thing on every accepted connection (`MQTTConfiguration.announcement`).
    let announcement: MQTTMessage?
    /// How many messages and acknowledgements the callbacks have taken: the network loop reads on while it grows.
    let packetsHandled = Atomic<Int>(0)

    init(logger: Logger, inbox: MQTTInbox, announcement: MQTTMessage? = nil) {
        self.logger = logger
        self.state = Mutex(MQTTClientState())
        self.inbox = inbox
        self.announcement = announcement
    }

    /// Recovers the context from libmosquitto's user data pointer without touching its retain count.
    static func from(_ userdata: UnsafeMutableRawPointer) -> MQTTCallbackContext {
        Unmanaged<MQTTCallbackContext>.fromOpaque(userdata).takeUnretainedValue()
    }

    /// Points libmosquitto's callbacks at the context passed as user data to `mosquitto_new`.
    static func installCallbacks(on mosq: OpaquePointer) {
        mosquitto_connect_with_flags_callback_set(mosq) { mosq, userdata, code, flags in
            guard let mosq, let userdata else { return }
            MQTTCallbackContext.from(userdata).didConnect(mosq, code: code, flags: flags)
        }
        mosquitto_disconnect_callback_set(mosq) { mosq, userdata, code in
            guard let userdata else { return }
            // Connecting again: libmosquitto's lines say why a connection fails (see `installLogCallback`).
            if let mosq { MQTTCallbackContext.installLogCallback(on: mosq) }
            MQTTCallbackContext.from(userdata).didDisconnect(code: code)
        }
        mosquitto_publish_callback_set(mosq) { _, userdata, mid in
            guard let userdata else { return }
            MQTTCallbackContext.from(userdata).didPublish(MQTTMessageID(rawValue: mid))
        }
        mosquitto_subscribe_callback_set(mosq) { _, userdata, mid, count, granted in
            guard let userdata, let granted, count > 0 else { return }
            MQTTCallbackContext.from(userdata).didSubscribe(mid: mid, grantedQoS: granted[0])
        }
        mosquitto_message_callback_set(mosq) { _, userdata, message in
            guard let userdata, let message else { return }
            MQTTCallbackContext.from(userdata).didReceive(message.pointee)
        }
        installLogCallback(on: mosq)
    }

    /// Passes libmosquitto's log lines to `didLog`.
    ///
    /// While a log callback is set, libmosquitto formats a line (malloc, vsnprintf, free) for every packet it sends
    /// or receives, before any level is looked at: two lines per received QoS 1 message, a good share of the network
    /// thread's time per message (`mosquitto_sub` sets none unless `-d`). So it is set only while connecting — when
    /// libmosquitto's lines carry the reasons of TLS and connection failures — or when the logger wants debug lines.
    private static func installLogCallback(on mosq: OpaquePointer) {
        mosquitto_log_callback_set(mosq) { _, userdata, level, text in
            guard let userdata, let text else { return }
            MQTTCallbackContext.from(userdata).didLog(level: level, text: String(cString: text))
        }
    }

    // MARK: Callbacks (the network thread, MQTTConnectionLoop)

    /// CONNACK arrived: `code` 0 means accepted; publish the announcement, re-subscribe everything we remember, then
    /// tell observers. libmosquitto resends the QoS 1 messages queued while disconnected only after this returns, so
    /// the announcement (an `online` status answering the last will) goes out ahead of them.
    private func didConnect(_ mosq: OpaquePointer, code: Int32, flags: Int32) {
        guard code == 0 else {
            let reason = String(cString: mosquitto_connack_string(code))
            logger.debug("broker refused the connection", metadata: ["mqtt.reason": "\(reason)"])
            notifyConnection(.disconnected(.refused(reason)))
            return
        }
        // Connected: libmosquitto's per-packet lines would cost more than the packets (see `installLogCallback`).
        if logger.logLevel > .debug { mosquitto_log_callback_set(mosq, nil) }
        let sessionPresent = flags & 1 != 0
        let subscriptions = state.withLock { state in
            state.isConnected = true
            state.sessionPresent = sessionPresent
            return state.subscriptions
        }
        logger.info("connected to broker", metadata: ["mqtt.sessionPresent": "\(sessionPresent)"])
        if let announcement { announce(announcement, on: mosq) }
        for subscription in subscriptions {
            var mid: Int32 = 0
            let status = mosquittoStatus { mosquitto_subscribe(mosq, &mid, subscription.filter, subscription.qos.rawValue) }
            if status.succeeded {
                recordSubscribe(mid: mid, filter: subscription.filter)
            } else {
                let error = status.error(call: "mosquitto_subscribe to \(subscription.filter)")
                report(.resubscribeFailed(filter: subscription.filter, error: "\(error)"))
            }
        }
        notifyConnection(.connected(sessionPresent: sessionPresent))
    }

    /// Publishes the announcement on the connection just accepted; a failure is reported (the next connection tries
    /// again).
    private func announce(_ message: MQTTMessage, on mosq: OpaquePointer) {
        var mid: Int32 = 0
        let status = message.payload.withUnsafeBytes { bytes in
            mosquittoStatus {
                mosquitto_publish(
                    mosq, &mid, message.topic, Int32(clamping: bytes.count), bytes.baseAddress,
                    message.qos.rawValue, message.retained)
            }
        }
        if status.succeeded {
            recordPublished(MQTTMessageID(rawValue: mid), qos: message.qos)
        } else {
            let error = status.error(call: "mosquitto_publish to \(message.topic)")
            report(.announcementFailed("\(error)"))
        }
    }

    /// The connection ended: `code` 0 means we asked for it, anything else is a libmosquitto error code.
    private func didDisconnect(code: Int32) {
        let wasConnected = state.withLock { state in
            let wasConnected = state.isConnected
            state.isConnected = false
            state.acknowledgedSubscriptions = []
            state.pendingSubscribes = [:]
            state.subacksBeforeRecorded = [:]
            // Unsent QoS 0 packets are discarded by libmosquitto on reconnect; they will never be reported.
            state.unacknowledged = state.unacknowledged.filter { $0.value != .atMostOnce }
            return wasConnected
        }
        guard wasConnected else { return }
        let reason: MQTTDisconnectReason =
            switch code {
            case 0: .requested
            case MOSQ_ERR_CONN_LOST.rawValue: .connectionLost("the broker closed the connection or the network failed")
            case MOSQ_ERR_KEEPALIVE.rawValue: .connectionLost("the broker did not answer within the keep-alive time")
            default: .connectionLost(libraryErrorText(code))
            }
        if code == 0 {
            logger.info("disconnected from broker")
        } else {
            logger.debug("lost the connection to the broker; reconnecting", metadata: ["mqtt.reason": "\(reason)"])
        }
        notifyConnection(.disconnected(reason))
    }

    /// A QoS 1 message was acknowledged (PUBACK) or a QoS 0 message was written to the socket.
    private func didPublish(_ id: MQTTMessageID) {
        packetsHandled.add(1, ordering: .relaxed)
        let observers = state.withLock { state in
            if state.unacknowledged.removeValue(forKey: id) == nil {
                state.acknowledgedBeforeRecorded.insert(id)
            }
            return Array(state.acknowledgementObservers.values)
        }
        for observer in observers { observer.yield(id) }
        signalChange()
    }

    /// SUBACK arrived for SUBSCRIBE `mid` (one filter per SUBSCRIBE); 0x80 means the broker refused it (ACL).
    private func didSubscribe(mid: Int32, grantedQoS: Int32) {
        let filter = state.withLock { state -> String? in
            guard let filter = state.pendingSubscribes.removeValue(forKey: mid) else {
                state.subacksBeforeRecorded[mid] = grantedQoS
                return nil
            }
            if grantedQoS < 0x80 { state.acknowledgedSubscriptions.insert(filter) }
            return filter
        }
        if let filter { reportSubscription(filter: filter, grantedQoS: grantedQoS) }
    }

    /// Records the id of a SUBSCRIBE for `filter`, or applies its SUBACK if that came first.
    func recordSubscribe(mid: Int32, filter: String) {
        let earlyGrant = state.withLock { state -> Int32? in
            guard let granted = state.subacksBeforeRecorded.removeValue(forKey: mid) else {
                state.pendingSubscribes[mid] = filter
                return nil
            }
            if granted < 0x80 { state.acknowledgedSubscriptions.insert(filter) }
            return granted
        }
        if let earlyGrant { reportSubscription(filter: filter, grantedQoS: earlyGrant) }
    }

    private func reportSubscription(filter: String, grantedQoS: Int32) {
        if grantedQoS >= 0x80 {
            report(.subscriptionRefused(filter: filter))
        } else {
            logger.debug("subscribed", metadata: ["mqtt.filter": "\(filter)", "mqtt.qos": "\(grantedQoS)"])
        }
        signalChange()
    }

    /// A message arrived: copy topic and payload now — libmosquitto frees them when the callback returns.
    private func didReceive(_ message: mosquitto_message) {
        packetsHandled.add(1, ordering: .relaxed)
        let topic = message.topic.map { String(cString: $0) } ?? ""
        var payload: [UInt8] = []
        if let bytes = message.payload, message.payloadlen > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
        }
        let received = MQTTMessage(
            topic: topic, payload: payload, qos: MQTTQoS(rawValue: message.qos) ?? .atLeastOnce, retained: message.retain,
            receivedAt: .now)
        // Waits here (on libmosquitto's thread) while the consumer is behind; nothing is dropped.
        _ = inbox.putWhenRoomBlocking { $0.append(received) }  // false once closed: the client is stopping
    }

    /// libmosquitto's own log lines: its errors (e.g. OpenSSL's reason for a rejected certificate) reported to the
    /// caller, its protocol chatter at trace, the rest at debug.
    private func didLog(level: Int32, text: String) {
        switch level {
        case MOSQ_LOG_ERR:
            report(.library(text))
        case MOSQ_LOG_DEBUG:
            logger.trace("\(text)", metadata: ["source": "libmosquitto"])
        default:
            logger.debug("\(text)", metadata: ["source": "libmosquitto"])
        }
    }

    // MARK: Observers

    /// A new stream of connection events; it ends when the client is closed or the consuming task is cancelled.
    func makeConnectionEventStream() -> AsyncStream<MQTTConnectionEvent> {
        makeObserverStream(\.connectionObservers, bufferingNewest: 64)
    }

    /// A new stream of acknowledged message ids; it ends when the client is closed or the consuming task is cancelled.
    func makeAcknowledgementStream() -> AsyncStream<MQTTMessageID> {
        makeObserverStream(\.acknowledgementObservers, bufferingNewest: 4096)
    }

    /// A new stream registered in `observers` until the consuming task is cancelled; already finished if the client
    /// is closed.
    private func makeObserverStream<Element>(
        _ observers: any WritableKeyPath<MQTTClientState, [Int: AsyncStream<Element>.Continuation]> & Sendable,
        bufferingNewest limit: Int
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(limit))
        let registered = state.withLock { state -> Int? in
            guard state.lifecycle != .closed else { return nil }
            let id = state.makeObserverID()
            state[keyPath: observers][id] = continuation
            return id
        }
        guard let id = registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0[keyPath: observers].removeValue(forKey: id) }
        }
        return stream
    }

    /// Waits until `condition` holds for the shared state, re-checking after every change; `false` after `timeout`
    /// or when the client is closed first.
    func waitUntil(timeout: Duration, _ condition: @escaping @Sendable (MQTTClientState) -> Bool) async -> Bool {
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.makeObserverID()
            state.changeObservers[id] = continuation
            return id
        }
        defer { _ = state.withLock { $0.changeObservers.removeValue(forKey: id) } }
        if state.withLock({ condition($0) }) { return true }
        if state.withLock({ $0.lifecycle == .closed }) { return false }
        let met = await withTimeout(timeout, fallback: false) { [self] in
            for await _ in changes where state.withLock({ condition($0) }) {
                return true
            }
            return false
        }
        return met || state.withLock { condition($0) }
    }

    /// Records an id returned by `mosquitto_publish`, unless its acknowledgement already came.
    func recordPublished(_ id: MQTTMessageID, qos: MQTTQoS) {
        state.withLock { state in
            if state.acknowledgedBeforeRecorded.remove(id) == nil {
                state.unacknowledged[id] = qos
            }
        }
    }

    /// Marks the client closed and ends every stream: `messages`, observers, waiters.
    func close() {
        let (connections, acknowledgements, changes) = state.withLock { state in
            state.lifecycle = .closed
            state.isConnected = false
            defer {
                state.connectionObservers = [:]
                state.acknowledgementObservers = [:]
                state.changeObservers = [:]
            }
            return (
                Array(state.connectionObservers.values), Array(state.acknowledgementObservers.values),
                Array(state.changeObservers.values)
            )
        }
        inbox.close()
        connections.forEach { $0.finish() }
        acknowledgements.forEach { $0.finish() }
        changes.forEach { $0.finish() }
    }

    /// Tells connection observers and waiters about a connection change.
    /// Reports `trouble` to the caller's connection event streams (logged here at debug only).
    func report(_ trouble: MQTTTrouble) {
        logger.debug("\(trouble)")
        notifyConnection(.trouble(trouble))
    }

    private func notifyConnection(_ event: MQTTConnectionEvent) {
        let observers = state.withLock { Array($0.connectionObservers.values) }
        for observer in observers { observer.yield(event) }
        signalChange()
    }

    /// Pokes every `waitUntil` so it re-checks its condition.
    func signalChange() {
        let observers = state.withLock { Array($0.changeObservers.values) }
        for observer in observers { observer.yield() }
    }
}

/// Runs `body`; returns its result, or `fallback` if `timeout` passes first (then `body` is cancelled).
func withTimeout<T: Sendable>(
    _ timeout: Duration, fallback: T, _ body: @escaping @Sendable () async -> T
) async -> T {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        if let first = await group.next(), let value = first {
            return value
        }
        return fallback
    }
}
