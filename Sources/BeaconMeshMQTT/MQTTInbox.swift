import BeaconMeshThreads

/// Received messages on their way from libmosquitto's network thread to the one consumer of `MQTTClient.messages`.
///
/// Bounded, and never lossy: when it is full, the network thread waits for room (`putWhenRoomBlocking`). libmosquitto
/// then stops reading the socket, TCP pushes back, and the broker keeps the unread messages queued (for QoS 1 and a
/// persistent session that is where they belong). Dropping instead would lose messages libmosquitto has already
/// acknowledged.
typealias MQTTInbox = Mailbox<BoundedQueue<MQTTMessage>>

/// The messages an `MQTTClient` receives, in order: an `AsyncSequence` for exactly one consumer.
///
/// A consumer that falls behind slows the connection down (the broker queues what is not read yet); nothing is
/// dropped. The sequence ends after `MQTTClient.disconnect`.
public struct MQTTMessages: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    let inbox: MQTTInbox

    public struct AsyncIterator: AsyncIteratorProtocol {
        let inbox: MQTTInbox
        public mutating func next() async -> MQTTMessage? { await inbox.take { $0.popFirst() } }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbox: inbox) }

    /// The next messages in order: all that wait now, up to `limit`, or (when none wait) those that arrive next;
    /// `nil` once the sequence has ended. For a consumer that handles messages a chunk at a time.
    public func next(upTo limit: Int) async -> [MQTTMessage]? {
        await inbox.take { $0.popFirst(upTo: limit) }
    }

    /// Up to `limit` of the messages waiting now, in order, without waiting (none if none wait).
    public func waiting(upTo limit: Int) -> [MQTTMessage] { inbox.takeNow { $0.popFirst(upTo: limit) } ?? [] }
}
