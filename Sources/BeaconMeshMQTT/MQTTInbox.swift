import Dispatch
import Synchronization

/// Received messages on their way from libmosquitto's network thread to the one consumer of `MQTTClient.messages`.
///
/// Bounded, and never lossy: when it is full, the network thread waits for room. libmosquitto then stops reading
/// the socket, TCP pushes back, and the broker keeps the unread messages queued (for QoS 1 and a persistent session
/// that is where they belong). Dropping instead would lose messages libmosquitto has already acknowledged.
final class MQTTInbox: Sendable {
    private struct State: ~Copyable {
        var buffer: [MQTTMessage] = []
        var head = 0
        var consumer: CheckedContinuation<MQTTMessage?, Never>?
        var producerWaiting = false
        var closed = false

        var count: Int { buffer.count - head }

        mutating func takeFirst() -> MQTTMessage {
            let message = buffer[head]
            head += 1
            if head > 1024 && head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return message
        }
    }

    private let state = Mutex(State())
    private let room = DispatchSemaphore(value: 0)
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds a message, waiting (on the calling thread) while the inbox is full; `false` once it is closed.
    @discardableResult
    func push(_ message: MQTTMessage) -> Bool {
        while true {
            enum Step {
                case delivered(CheckedContinuation<MQTTMessage?, Never>)
                case stored, full, closed
            }
            let step: Step = state.withLock { state in
                if state.closed { return .closed }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .delivered(consumer)
                }
                if state.count < capacity {
                    state.buffer.append(message)
                    return .stored
                }
                state.producerWaiting = true
                return .full
            }
            switch step {
            case .delivered(let consumer):
                consumer.resume(returning: message)
                return true
            case .stored:
                return true
            case .closed:
                return false
            case .full:
                _ = room.wait(timeout: .now() + .milliseconds(100))
            }
        }
    }

    /// Adds a message at once, beyond `capacity` if need be; `false` once the inbox is closed. For producers that
    /// must not wait and bound themselves (`MQTTMessageFeed`).
    @discardableResult
    func pushWithoutWaiting(_ message: MQTTMessage) -> Bool {
        let step: (delivered: CheckedContinuation<MQTTMessage?, Never>?, accepted: Bool) = state.withLock { state in
            if state.closed { return (nil, false) }
            if let consumer = state.consumer {
                state.consumer = nil
                return (consumer, true)
            }
            state.buffer.append(message)
            return (nil, true)
        }
        step.delivered?.resume(returning: message)
        return step.accepted
    }

    /// The next message; `nil` once the inbox is closed and empty, or when the waiting task is cancelled.
    func next() async -> MQTTMessage? {
        enum Step {
            case message(MQTTMessage, wakeProducer: Bool)
            case finished, wait
        }
        let step: Step = state.withLock { state in
            if state.count > 0 {
                let message = state.takeFirst()
                // Wake a waiting network thread only once half the room is free, not for every message taken.
                let wake = state.producerWaiting && state.count <= capacity / 2
                if wake { state.producerWaiting = false }
                return .message(message, wakeProducer: wake)
            }
            return state.closed ? .finished : .wait
        }
        switch step {
        case .message(let message, let wake):
            if wake { room.signal() }
            return message
        case .finished:
            return nil
        case .wait:
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<MQTTMessage?, Never>) in
                    let resumeNow: Bool = state.withLock { state in
                        if state.closed || Task.isCancelled { return true }
                        if state.count > 0 { return true }
                        state.consumer = continuation
                        return false
                    }
                    if resumeNow {
                        let message: MQTTMessage? = state.withLock { state in state.count > 0 ? state.takeFirst() : nil }
                        continuation.resume(returning: message)
                    }
                }
            } onCancel: {
                let consumer = state.withLock { state in
                    defer { state.consumer = nil }
                    return state.consumer
                }
                consumer?.resume(returning: nil)
            }
        }
    }

    /// Up to `limit` of the messages waiting now, oldest first, without waiting (none if none wait).
    func take(upTo limit: Int) -> [MQTTMessage] {
        let (messages, wake): ([MQTTMessage], Bool) = state.withLock { state in
            let count = min(limit, state.count)
            guard count > 0 else { return ([], false) }
            var messages: [MQTTMessage] = []
            messages.reserveCapacity(count)
            for _ in 0..<count { messages.append(state.takeFirst()) }
            let wake = state.producerWaiting && state.count <= capacity / 2
            if wake { state.producerWaiting = false }
            return (messages, wake)
        }
        if wake { room.signal() }
        return messages
    }

    /// Ends the inbox: a waiting consumer gets `nil` (after what is left), a waiting producer gives up.
    func close() {
        let consumer = state.withLock { state in
            state.closed = true
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume(returning: nil)
        room.signal()
    }
}

/// The messages an `MQTTClient` receives, in order: an `AsyncSequence` for exactly one consumer.
///
/// A consumer that falls behind slows the connection down (the broker queues what is not read yet); nothing is
/// dropped. The sequence ends after `MQTTClient.disconnect`.
public struct MQTTMessages: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    let inbox: MQTTInbox

    public struct AsyncIterator: AsyncIteratorProtocol {
        let inbox: MQTTInbox
        public mutating func next() async -> MQTTMessage? { await inbox.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbox: inbox) }

    /// The next messages in order: all that wait now, up to `limit`, or (when none wait) the next one to arrive;
    /// `nil` once the sequence has ended. For a consumer that handles messages a chunk at a time.
    public func next(upTo limit: Int) async -> [MQTTMessage]? {
        let waiting = inbox.take(upTo: limit)
        if !waiting.isEmpty { return waiting }
        guard let first = await inbox.next() else { return nil }
        return [first] + inbox.take(upTo: limit - 1)
    }

    /// Up to `limit` of the messages waiting now, in order, without waiting (none if none wait).
    public func waiting(upTo limit: Int) -> [MQTTMessage] { inbox.take(upTo: limit) }
}
