import Testing

@testable import BeaconMeshCore

@Suite("Outbound queue")
struct OutboundQueueTests {
    @Test("messages leave in order and only after acknowledgement")
    func orderAndAcknowledgement() {
        var queue = OutboundQueue<Int>(capacity: 10, maximumInFlight: 2)
        for value in 1...4 { queue.enqueue(value) }
        var handed: [Int] = []
        var id: Int32 = 100
        while let next = queue.nextToSend() {
            handed.append(next)
            queue.sent(id: id)
            id += 1
        }
        #expect(handed == [1, 2])
        #expect(queue.count == 4)
        let first = queue.acknowledge(id: 100)
        let again = queue.acknowledge(id: 100)
        #expect(first)
        #expect(!again)
        #expect(queue.nextToSend() == 3)
        #expect(queue.count == 3)
    }

    @Test("a full queue drops its oldest waiting message and counts it")
    func dropOldest() {
        var queue = OutboundQueue<Int>(capacity: 3, maximumInFlight: 1)
        for value in 1...5 { queue.enqueue(value) }
        #expect(queue.dropped == 2)
        #expect(queue.count == 3)
        #expect(queue.nextToSend() == 3)
    }

    @Test("a long run stays bounded and in order")
    func longRun() {
        var queue = OutboundQueue<Int>(capacity: 100, maximumInFlight: 8)
        var received: [Int] = []
        var nextID: Int32 = 0
        var inFlight: [(Int32, Int)] = []
        for value in 0..<10_000 {
            queue.enqueue(value)
            while let next = queue.nextToSend() {
                queue.sent(id: nextID)
                inFlight.append((nextID, next))
                nextID += 1
            }
            if value % 3 == 0, !inFlight.isEmpty {
                let (id, message) = inFlight.removeFirst()
                queue.acknowledge(id: id)
                received.append(message)
            }
        }
        #expect(received == received.sorted())
        #expect(queue.count <= 100)
    }

    /// A message whose lifetime a test can watch.
    final class Payload: Sendable {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    @Test("a message is released as soon as it is acknowledged or dropped, not kept until the queue compacts")
    func releasesMessagesAtOnce() {
        var queue = OutboundQueue<Payload>(capacity: 2, maximumInFlight: 1)
        weak var acknowledged: Payload?
        weak var dropped: Payload?
        do {
            let first = Payload(1)
            let second = Payload(2)
            acknowledged = first
            dropped = second
            queue.enqueue(first)
            queue.sent(id: 1)
            queue.enqueue(second)  // waits: the in-flight window (1) is full
            queue.enqueue(Payload(3))  // full: the oldest waiting one (2) is dropped
        }
        #expect(dropped == nil, "a dropped message is still held by the queue")
        #expect(queue.dropped == 1)
        let known = queue.acknowledge(id: 1)
        #expect(known)
        #expect(acknowledged == nil, "an acknowledged message is still held by the queue")
        #expect(queue.nextToSend()?.number == 3)
        #expect(queue.count == 1)
    }

    @Test("the queue's weight is the bytes it holds: added on enqueue, given back on acknowledgement and on a drop")
    func weightFollowsTheBytesHeld() {
        var queue = OutboundQueue<[UInt8]>(capacity: 3, maximumInFlight: 2, weigh: \.count)
        queue.enqueue(Array(repeating: 1, count: 100))
        queue.enqueue(Array(repeating: 2, count: 200))
        queue.enqueue(Array(repeating: 3, count: 300))
        #expect(queue.weight == 600)
        queue.sent(id: 1)
        queue.sent(id: 2)
        // Full: the oldest waiting message (300 bytes) makes room for the newest.
        queue.enqueue(Array(repeating: 4, count: 400))
        #expect(queue.weight == 700)
        queue.acknowledge(id: 1)
        #expect(queue.weight == 600)
        queue.acknowledgeAll { $0 == 2 }
        #expect(queue.weight == 400)
        #expect(queue.dropped == 1)
    }
}
