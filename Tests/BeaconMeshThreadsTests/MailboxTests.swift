import BeaconMeshTesting
import Synchronization
import Testing

@testable import BeaconMeshThreads

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one mailbox: what goes in comes out in the contents' order, producers wait for room (suspended or blocked) and
/// are woken by the contents' rule, and closing or cancelling ends every wait.
@Suite("Mailbox")
struct MailboxTests {
    /// Waits (polling, at most 10 s) until `mailbox` has `count` producers waiting for room.
    private static func waitForProducers<Contents>(_ count: Int, in mailbox: Mailbox<Contents>) async -> Bool {
        await eventually(timeout: .seconds(10), interval: .milliseconds(1)) { mailbox.producersWaiting == count }
    }

    @Test("a queue gives its items in order, what is left after closing, then nil; puts after closing are refused")
    func orderAndClose() async {
        let mailbox = Mailbox(BoundedQueue<Int>(capacity: 8))
        for item in 1...5 { #expect(mailbox.put { $0.append(item) }) }
        #expect(await mailbox.take { $0.popFirst() } == 1)
        #expect(await mailbox.take { $0.popFirst(upTo: 3) } == [2, 3, 4])
        #expect(mailbox.takeNow { $0.popFirst(upTo: 3) } == [5])
        #expect(mailbox.takeNow { $0.popFirst() } == nil)
        mailbox.put { $0.append(6) }
        mailbox.close()
        #expect(!mailbox.put { $0.append(7) })
        #expect(await mailbox.take { $0.popFirst() } == 6)
        #expect(await mailbox.take { $0.popFirst() } == nil)
    }

    @Test("a waiting consumer is woken by a put from another thread")
    func consumerWokenByThread() async throws {
        let mailbox = Mailbox(BoundedQueue<String>(capacity: 4))
        async let taken = mailbox.take { $0.popFirst() }
        let thread = try DedicatedThread(name: "test-producer") {
            usleep(20_000)
            mailbox.put { $0.append("hello") }
        }
        #expect(await taken == "hello")
        thread.join()
    }

    @Test("a blocked producer thread waits while the queue is full and is woken once half of it is free")
    func blockedProducerWokenAtHalf() async throws {
        let mailbox = Mailbox(BoundedQueue<Int>(capacity: 4))
        for item in 1...4 { mailbox.put { $0.append(item) } }
        let done = Atomic(false)
        let thread = try DedicatedThread(name: "test-producer") {
            let accepted = mailbox.putWhenRoomBlocking { $0.append(5) }
            done.store(accepted, ordering: .sequentiallyConsistent)
        }
        #expect(await Self.waitForProducers(1, in: mailbox))
        #expect(!mailbox.putIfRoom { $0.append(99) }, "a producer that will not wait is refused while full")
        #expect(mailbox.takeNow { $0.popFirst() } == 1)
        // Three of four wait: not woken yet.
        #expect(mailbox.producersWaiting == 1)
        let doneEarly = done.load(ordering: .sequentiallyConsistent)
        #expect(!doneEarly)
        #expect(mailbox.takeNow { $0.popFirst() } == 2)
        thread.join()
        let doneAfter = done.load(ordering: .sequentiallyConsistent)
        #expect(doneAfter)
        #expect(mailbox.takeNow { $0.popFirst(upTo: 10) } == [3, 4, 5])
    }

    @Test("a suspended producer waits for room; a cancelled one gives up without putting")
    func suspendedProducer() async {
        let mailbox = Mailbox(BoundedQueue<Int>(capacity: 1))
        mailbox.put { $0.append(1) }
        let waiting = Task { await mailbox.putWhenRoom { $0.append(2) } }
        #expect(await Self.waitForProducers(1, in: mailbox))
        #expect(await mailbox.take { $0.popFirst() } == 1)
        #expect(await waiting.value)
        #expect(await mailbox.take { $0.popFirst() } == 2)

        mailbox.put { $0.append(3) }
        let cancelled = Task { await mailbox.putWhenRoom { $0.append(4) } }
        #expect(await Self.waitForProducers(1, in: mailbox))
        cancelled.cancel()
        #expect(await cancelled.value == false)
        #expect(mailbox.takeNow { $0.popFirst(upTo: 10) } == [3])
    }

    @Test("closing wakes a blocked producer and a suspended one with false, and a waiting consumer with nil")
    func closeEndsWaits() async throws {
        let mailbox = Mailbox(BoundedQueue<Int>(capacity: 1))
        mailbox.put { $0.append(1) }
        let accepted = Atomic(true)
        let thread = try DedicatedThread(name: "test-producer") {
            accepted.store(mailbox.putWhenRoomBlocking { $0.append(2) }, ordering: .sequentiallyConsistent)
        }
        let suspended = Task { await mailbox.putWhenRoom { $0.append(3) } }
        #expect(await Self.waitForProducers(2, in: mailbox))
        mailbox.close()
        thread.join()
        let acceptedAfterClose = accepted.load(ordering: .sequentiallyConsistent)
        #expect(!acceptedAfterClose)
        #expect(await suspended.value == false)
        #expect(await mailbox.take { $0.popFirst() } == 1)
        #expect(await mailbox.take { $0.popFirst() } == nil)

        let empty = Mailbox(BoundedQueue<Int>(capacity: 1))
        async let ended = empty.take { $0.popFirst() }
        #expect(await eventually(timeout: .seconds(10)) { empty.consumerWaiting }, "the consumer waits before the close")
        empty.close()
        #expect(await ended == nil)
    }

    @Test("a consumer cancelled while it waits gets nil")
    func consumerCancelled() async {
        let mailbox = Mailbox(BoundedQueue<Int>(capacity: 1))
        let consumer = Task { await mailbox.take { $0.popFirst() } }
        #expect(await eventually(timeout: .seconds(10)) { mailbox.consumerWaiting }, "the consumer waits before it is cancelled")
        consumer.cancel()
        #expect(await consumer.value == nil)
        mailbox.put { $0.append(1) }
        #expect(await mailbox.take { $0.popFirst() } == 1, "the mailbox still works after a consumer gave up")
    }

    /// Contents that keep only the latest value: what a consumer takes decides what "nothing yet" means.
    struct Latest: MailboxContents {
        var value: Int?
        var isFull: Bool { false }
    }

    @Test("contents decide what is kept: a newer value replaces one not yet taken")
    func coalescingContents() async {
        let mailbox = Mailbox(Latest())
        for value in 1...3 { mailbox.put { $0.value = value } }
        let taken = await mailbox.take { contents in
            defer { contents.value = nil }
            return contents.value
        }
        #expect(taken == 3)
        #expect(mailbox.takeNow { $0.value } == nil)
    }
}
