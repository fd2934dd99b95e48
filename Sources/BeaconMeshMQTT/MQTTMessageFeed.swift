import BeaconMeshThreads

/// The producing end of an `MQTTMessages` sequence that is fed by hand rather than by libmosquitto: how an in-memory
/// client (`BeaconMeshTesting.InMemoryMQTTClient`) hands messages to the service under test.
///
/// `yield` never waits, so the sequence is not bounded: the feeder bounds itself (an in-memory broker in a test
/// delivers only what the test publishes). Order is kept; one consumer reads, as with `MQTTClient.messages`.
public struct MQTTMessageFeed: Sendable {
    let inbox: MQTTInbox

    /// A message sequence for one consumer and the feed that fills it.
    public static func makeMessages() -> (messages: MQTTMessages, feed: MQTTMessageFeed) {
        let inbox = MQTTInbox(BoundedQueue(capacity: 1))
        return (MQTTMessages(inbox: inbox), MQTTMessageFeed(inbox: inbox))
    }

    /// Hands `message` to the consumer (now, or when it next reads); `false` once the feed is finished.
    @discardableResult
    public func yield(_ message: MQTTMessage) -> Bool {
        inbox.put { $0.append(message) }
    }

    /// Ends the sequence: the consumer reads what is left, then `nil`.
    public func finish() {
        inbox.close()
    }
}
