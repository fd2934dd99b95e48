import Testing

@testable import BeaconMeshThreads

/// The queue a mailbox most often holds: an item taken is the taker's alone, even while later items still wait.
@Suite("Bounded queue")
struct BoundedQueueTests {
    /// An item whose release can be seen through a weak reference.
    final class Item: Sendable {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    @Test("an item taken is no longer held by the queue while later ones still wait")
    func takenItemsReleased() {
        var queue = BoundedQueue<Item>(capacity: 8)
        weak var first: Item?
        weak var second: Item?
        weak var third: Item?
        do {
            let items = [Item(1), Item(2), Item(3), Item(4)]
            first = items[0]
            second = items[1]
            third = items[2]
            for item in items { queue.append(item) }
        }
        do {
            let taken = queue.popFirst()
            #expect(taken?.number == 1)
        }
        #expect(first == nil, "the queue still held the item popped, with three waiting behind it")
        do {
            let taken = queue.popFirst(upTo: 2)
            #expect(taken?.map(\.number) == [2, 3])
        }
        #expect(second == nil && third == nil, "the queue still held the items popped together, with one waiting")
        #expect(queue.count == 1)
        #expect(queue.popFirst()?.number == 4)
        #expect(queue.popFirst() == nil)
    }

    @Test("a queue that never runs empty keeps giving its items in order")
    func neverEmptyKeepsOrder() {
        var queue = BoundedQueue<Int>(capacity: .max)
        queue.append(0)
        var expected = 0
        for next in 1...5_000 {
            queue.append(next)
            #expect(queue.popFirst() == expected)
            expected += 1
        }
        #expect(queue.count == 1)
        #expect(queue.buffer.count < 2_100, "slots taken are dropped from time to time, not kept for ever")
    }
}
