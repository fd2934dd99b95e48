/// The scanner's queue of messages for the broker: bounded, first in first out, and nothing leaves its count until the
/// broker has acknowledged it.
///
/// Messages wait here while the broker is unreachable; at most `maximumInFlight` are handed to the MQTT client at a
/// time, in order. When the queue is full the oldest waiting message is dropped and counted — the newest readings
/// matter most to a presence system.
public struct OutboundQueue<Message: Sendable>: Sendable {
    /// A message handed to the client, waiting for the broker's acknowledgement. The client keeps the message itself
    /// (and resends it after a reconnect) until then: the queue keeps only its id and weight, not a second copy of a
    /// batch that can be most of a megabyte.
    public struct InFlight: Sendable {
        public var id: Int32
        public var weight: Int
    }

    public let capacity: Int
    public let maximumInFlight: Int
    /// `waiting[waitingStart...]` wait; the slots before `waitingStart` are emptied (`nil`) as messages leave, so a
    /// message sent or dropped is released at once, not when the array is next compacted.
    private var waiting: [Message?] = []
    private var waitingStart = 0
    private var inFlight: [InFlight] = []
    /// Messages dropped because the queue was full.
    public private(set) var dropped: UInt64 = 0
    /// The summed `weigh` of the messages not yet acknowledged (waiting and in flight): their bytes, for a queue of
    /// payloads.
    public private(set) var weight = 0
    private let weigh: @Sendable (Message) -> Int

    /// A queue of at most `capacity` messages, `maximumInFlight` of them handed to the client at a time; `weight`
    /// sums `weigh` over the messages it holds (default: 1 each).
    public init(capacity: Int = 10_000, maximumInFlight: Int = 64, weigh: @escaping @Sendable (Message) -> Int = { _ in 1 }) {
        precondition(capacity > 0 && maximumInFlight > 0)
        self.capacity = capacity
        self.maximumInFlight = maximumInFlight
        self.weigh = weigh
    }

    /// Messages not yet acknowledged (waiting and in flight).
    public var count: Int { waiting.count - waitingStart + inFlight.count }
    public var isEmpty: Bool { count == 0 }
    /// The ids of the messages handed to the client and not yet acknowledged, oldest first.
    public var inFlightIDs: [Int32] { inFlight.map(\.id) }

    /// Messages not yet handed to the client.
    public var waitingCount: Int { waiting.count - waitingStart }

    /// Adds a message at the end; drops the oldest waiting one when full.
    public mutating func enqueue(_ message: Message) {
        if count >= capacity, waitingCount > 0 {
            if let oldest = waiting[waitingStart] { weight -= weigh(oldest) }
            waiting[waitingStart] = nil
            waitingStart += 1
            dropped += 1
        } else if count >= capacity {
            dropped += 1
            return
        }
        waiting.append(message)
        weight += weigh(message)
        compactIfNeeded()
    }

    /// The next message to hand to the client, if the in-flight window has room; call `sent` with its id.
    public func nextToSend() -> Message? {
        guard inFlight.count < maximumInFlight, waitingStart < waiting.count else { return nil }
        return waiting[waitingStart]!
    }

    /// Records that the message returned by `nextToSend` was handed to the client under `id`.
    public mutating func sent(id: Int32) {
        guard waitingStart < waiting.count, let message = waiting[waitingStart] else { return }
        inFlight.append(InFlight(id: id, weight: weigh(message)))
        waiting[waitingStart] = nil
        waitingStart += 1
        compactIfNeeded()
    }

    /// Records that the message handed over as `id` needs no further care (acknowledged, or sent with QoS 0).
    /// Returns `false` for an unknown id.
    @discardableResult
    public mutating func acknowledge(id: Int32) -> Bool {
        guard let index = inFlight.firstIndex(where: { $0.id == id }) else { return false }
        weight -= inFlight[index].weight
        inFlight.remove(at: index)
        return true
    }

    /// Records that every in-flight message `isDone` says needs no further care is done with (a caller that polls its
    /// client rather than hearing each acknowledgement); returns how many. Allocates nothing.
    @discardableResult
    public mutating func acknowledgeAll(where isDone: (Int32) -> Bool) -> Int {
        let before = inFlight.count
        var released = 0
        inFlight.removeAll { message in
            guard isDone(message.id) else { return false }
            released += message.weight
            return true
        }
        weight -= released
        return before - inFlight.count
    }

    private mutating func compactIfNeeded() {
        if waitingStart == waiting.count {
            waiting.removeAll(keepingCapacity: waiting.count <= 1024)
            waitingStart = 0
        } else if waitingStart > 1024 && waitingStart * 2 > waiting.count {
            waiting.removeFirst(waitingStart)
            waitingStart = 0
        }
    }
}
