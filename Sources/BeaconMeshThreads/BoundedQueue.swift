/// Items in the order they came, for a `Mailbox`: full while `capacity` items wait, and a producer waiting for room is
/// woken once half of it is free again (not for every item taken). An item taken is no longer held by the queue, even
/// while others still wait behind it.
public struct BoundedQueue<Element: Sendable>: MailboxContents {
    /// The waiting items from `head` on. A slot taken is emptied at once: a queue that a fast producer never lets run
    /// empty would otherwise keep every item taken since it last did, up to the 1,024 that `compact` lets pass (the
    /// scanner's inbox, its replayed chunks of 16 kB: megabytes of its peak).
    @usableFromInline
    var buffer: [Element?] = []
    @usableFromInline
    var head = 0
    /// How many items may wait before a producer that waits for room must wait.
    public let capacity: Int

    /// An empty queue with room for `capacity` items (at least 1).
    @inlinable
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many items wait.
    @inlinable
    public var count: Int { buffer.count - head }

    @inlinable
    public var isFull: Bool { count >= capacity }

    @inlinable
    public var hasRoomForWaitingProducers: Bool { count <= capacity / 2 }

    /// Adds `item` last (beyond `capacity` if the producer did not wait for room).
    @inlinable
    public mutating func append(_ item: Element) {
        buffer.append(item)
    }

    /// The oldest item, removed; `nil` if none waits.
    @inlinable
    public mutating func popFirst() -> Element? {
        guard head < buffer.count, let item = buffer[head] else { return nil }
        buffer[head] = nil
        head += 1
        compact()
        return item
    }

    /// Up to `limit` of the oldest items, removed, oldest first; `nil` if none waits.
    @inlinable
    public mutating func popFirst(upTo limit: Int) -> [Element]? {
        let taken = min(limit, count)
        guard taken > 0 else { return nil }
        var items: [Element] = []
        items.reserveCapacity(taken)
        for index in head..<head + taken {
            if let item = buffer[index] { items.append(item) }
            buffer[index] = nil
        }
        head += taken
        compact()
        return items
    }

    /// Drops the slots already taken (empty) once they are most of the buffer, so it does not grow without end.
    @inlinable
    mutating func compact() {
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
    }
}
