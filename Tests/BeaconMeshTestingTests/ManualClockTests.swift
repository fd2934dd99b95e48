import BeaconMeshCore
import BeaconMeshTesting
import Synchronization
import Testing

@Suite("Manual clock")
struct ManualClockTests {
    @Test("time stands still until advanced, then moves by exactly the amount")
    func readsAdvance() {
        let clock = ManualClock(now: Timestamp(milliseconds: 1_000))
        #expect(clock.now() == Timestamp(milliseconds: 1_000))
        #expect(clock.now() == Timestamp(milliseconds: 1_000))
        clock.advance(by: .milliseconds(250))
        #expect(clock.now() == Timestamp(milliseconds: 1_250))
        clock.advance(to: Timestamp(milliseconds: 1_000))  // never backwards
        #expect(clock.now() == Timestamp(milliseconds: 1_250))
    }

    @Test("a sleeper wakes when its deadline comes, not a millisecond earlier")
    func wakesAtDeadline() async throws {
        let clock = ManualClock()
        let woke = Atomic(false)
        let sleeper = Task {
            try await clock.sleep(for: .milliseconds(100))
            woke.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(await clock.waitForSleepers(1))
        clock.advance(by: .milliseconds(99))
        #expect(clock.sleeperCount == 1)
        let early = woke.load(ordering: .sequentiallyConsistent)
        #expect(!early)
        clock.advance(by: .milliseconds(1))
        #expect(clock.sleeperCount == 0)
        try await sleeper.value
        let late = woke.load(ordering: .sequentiallyConsistent)
        #expect(late)
    }

    @Test("one advance wakes every sleeper that is due and leaves the others")
    func wakesOnlyDue() async throws {
        let start = Timestamp(milliseconds: 0)
        let clock = ManualClock(now: start)
        let short = Task { try await clock.sleep(for: .milliseconds(10)) }
        let middle = Task { try await clock.sleep(for: .milliseconds(20)) }
        let long = Task { try await clock.sleep(for: .seconds(1)) }
        #expect(await clock.waitForSleepers(3))
        #expect(clock.nextDeadline == start + .milliseconds(10))
        clock.advance(by: .milliseconds(25))
        try await short.value
        try await middle.value
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == start + .seconds(1))
        long.cancel()
        await #expect(throws: CancellationError.self) { try await long.value }
    }

    @Test("a sleeper that goes back to sleep after waking sleeps from the new now")
    func periodicSleeper() async throws {
        let clock = ManualClock(now: Timestamp(milliseconds: 0))
        let ticks = Atomic(0)
        let ticker = Task {
            while !Task.isCancelled {
                try await clock.sleep(for: .milliseconds(50))
                ticks.add(1, ordering: .sequentiallyConsistent)
            }
        }
        for expected in 1...3 {
            #expect(await clock.waitForSleepers(1))
            clock.advance(by: .milliseconds(50))
            // The ticker counts, then sleeps again: wait until it is parked on the clock.
            #expect(await clock.waitForSleepers(1))
            let counted = ticks.load(ordering: .sequentiallyConsistent)
            #expect(counted == expected)
        }
        clock.advance(by: .seconds(10))  // one advance, however long, wakes a sleeper once
        #expect(await clock.waitForSleepers(1))
        let afterLongAdvance = ticks.load(ordering: .sequentiallyConsistent)
        #expect(afterLongAdvance == 4)
        #expect(clock.nextDeadline == Timestamp(milliseconds: 10_200))
        ticker.cancel()
        await #expect(throws: CancellationError.self) { try await ticker.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("sleeping zero returns at once; a fraction of a millisecond sleeps a whole one; a cancelled task does not sleep")
    func edges() async throws {
        let clock = ManualClock(now: Timestamp(milliseconds: 0))
        try await clock.sleep(for: .zero)
        try await clock.sleep(for: .milliseconds(-5))
        let fraction = Task { try await clock.sleep(for: .microseconds(10)) }
        #expect(await clock.waitForSleepers(1))
        #expect(clock.nextDeadline == Timestamp(milliseconds: 1))
        clock.advance(by: .milliseconds(1))
        try await fraction.value

        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("waiting for sleepers that never come gives up with false")
    func waitGivesUp() async {
        let clock = ManualClock()
        #expect(!(await clock.waitForSleepers(1, timeout: .milliseconds(10))))
    }
}
