import Synchronization
import Testing

@testable import BeaconMeshScanner

@Suite("Handoff credits")
struct HandoffCreditsTests {
    @Test("a producer gets `limit` credits at once, then waits until the consumer gives one back")
    func producerWaitsForCredit() async throws {
        let credits = HandoffCredits(limit: 2)
        #expect(await credits.acquire())
        #expect(await credits.acquire())
        let handedOver = Atomic(0)
        let producer = Task {
            let granted = await credits.acquire()
            handedOver.store(1, ordering: .releasing)
            return granted
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(handedOver.load(ordering: .acquiring) == 0, "the producer went on without a credit")
        credits.release()
        #expect(await producer.value)
        #expect(handedOver.load(ordering: .acquiring) == 1)
    }

    @Test("a producer that cannot wait takes a credit only while one is left, and none once closed")
    func tryAcquireNeverWaits() {
        let credits = HandoffCredits(limit: 2)
        #expect(credits.tryAcquire())
        #expect(credits.tryAcquire())
        #expect(!credits.tryAcquire(), "a third chunk would exceed the limit")
        credits.release()
        #expect(credits.tryAcquire())
        credits.release()
        credits.close()
        #expect(!credits.tryAcquire())
    }

    @Test("closing ends a waiting producer's wait with false, and every later one at once")
    func closeEndsWaits() async {
        let credits = HandoffCredits(limit: 1)
        #expect(await credits.acquire())
        let producer = Task { await credits.acquire() }
        try? await Task.sleep(for: .milliseconds(100))
        credits.close()
        #expect(await producer.value == false)
        #expect(await credits.acquire() == false)
    }
}
