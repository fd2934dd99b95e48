import Testing

@testable import BeaconMeshCore

/// The duplicate / late / gap rule that nodes' batches and phones' ranging reports share.
@Suite("Sequence track")
struct SequenceTrackTests {
    @Test("the first message of an epoch is applied whatever its number, and nothing before it is missing")
    func firstOfEpoch() {
        var track = SequenceTrack()
        let order1 = track.admit(57, epoch: "boot-1")
        #expect(order1 == .newEpoch)
        #expect(track.epoch == "boot-1")
        #expect(track.lastSeq == 57)
        #expect(track.missing.isEmpty)
        let order2 = track.admit(58, epoch: "boot-1")
        #expect(order2 == .next(skipped: 0, follows: true))
    }

    @Test("the number last applied, again, is a duplicate and changes nothing")
    func duplicate() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "b")
        _ = track.admit(4, epoch: "b")
        let before = track
        let order1 = track.admit(4, epoch: "b")
        #expect(order1 == .duplicate)
        #expect(track == before)
    }

    @Test("numbers skipped are missing; a late one that fills a gap is taken back, a redelivered one is not")
    func lateFillsGap() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "b")
        let order1 = track.admit(4, epoch: "b")
        #expect(order1 == .next(skipped: 2, follows: false))
        #expect(track.missing == [2, 3])
        let order2 = track.admit(3, epoch: "b")
        #expect(order2 == .late(filledGap: true))
        #expect(track.missing == [2])
        let order3 = track.admit(3, epoch: "b")
        #expect(order3 == .late(filledGap: false), "3 arrived once already")
        let order4 = track.admit(1, epoch: "b")
        #expect(order4 == .late(filledGap: false), "1 was applied, never missing")
        #expect(track.lastSeq == 4, "a late message does not move the order back")
    }

    @Test("only the newest missingLimit skipped numbers are remembered; all of them are counted")
    func missingLimit() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "b")
        let order1 = track.admit(1_001, epoch: "b")
        #expect(order1 == .next(skipped: 999, follows: false))
        #expect(track.missing.count == SequenceTrack.missingLimit)
        #expect(track.missing.first == 1_001 - UInt64(SequenceTrack.missingLimit))
        let order2 = track.admit(1_000, epoch: "b")
        #expect(order2 == .late(filledGap: true))
        let order3 = track.admit(5, epoch: "b")
        #expect(order3 == .late(filledGap: false), "too old to be remembered: stays lost")
    }

    @Test("a new epoch numbers afresh and forgets what the epoch before skipped")
    func newEpochForgetsMissing() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "boot-1")
        _ = track.admit(5, epoch: "boot-1")
        let order1 = track.admit(2, epoch: "boot-2")
        #expect(order1 == .newEpoch)
        #expect(track.missing.isEmpty)
        #expect(track.lastSeq == 2)
        let order2 = track.admit(1, epoch: "boot-2")
        #expect(order2 == .late(filledGap: false))
        let order3 = track.admit(3, epoch: "boot-2")
        #expect(order3 == .next(skipped: 0, follows: true))
    }

    @Test("drop takes a missing number back once, without moving the order")
    func dropWithoutApplying() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "b")
        _ = track.admit(3, epoch: "b")
        #expect(!track.isNewer(3))
        #expect(track.isNewer(4))
        let dropped1 = track.drop(2)
        #expect(dropped1)
        let dropped2 = track.drop(2)
        #expect(!dropped2)
        #expect(track.lastSeq == 3)
    }

    @Test("a retained status of the epoch followed keeps its order: the next message is no gap, the last one again a duplicate")
    func restoreSameEpoch() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "b")
        _ = track.admit(7, epoch: "b")
        track.restore(epoch: "b")
        #expect(track.lastSeq == 7)
        let order1 = track.admit(7, epoch: "b")
        #expect(order1 == .duplicate)
        let order2 = track.admit(8, epoch: "b")
        #expect(order2 == .next(skipped: 0, follows: true))
    }

    @Test("a retained status of another epoch restarts the numbering at 1 and keeps the missing numbers")
    func restoreOtherEpoch() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "boot-1")
        _ = track.admit(3, epoch: "boot-1")
        track.restore(epoch: "boot-2")
        #expect(track.epoch == "boot-2")
        #expect(track.lastSeq == 0)
        #expect(track.missing == [2])
        let order1 = track.admit(4, epoch: "boot-2")
        #expect(order1 == .next(skipped: 3, follows: false), "1, 2 and 3 of boot-2 are missing")
    }

    @Test("a retained status without an epoch restarts the numbering; the next epoch keeps the missing numbers")
    func restoreNoEpoch() {
        var track = SequenceTrack()
        _ = track.admit(1, epoch: "boot-1")
        _ = track.admit(3, epoch: "boot-1")
        track.restore(epoch: nil)
        #expect(track.epoch == nil)
        #expect(track.lastSeq == 0)
        let order1 = track.admit(9, epoch: "boot-2")
        #expect(order1 == .newEpoch)
        #expect(track.missing == [2], "no epoch was followed, so none is forgotten")
    }

    @Test("a live status of another epoch restarts the numbering; one without an epoch keeps the epoch followed")
    func statusChanged() {
        var track = SequenceTrack()
        _ = track.admit(5, epoch: "boot-1")
        track.statusChanged(epoch: "boot-1")
        #expect(track.lastSeq == 5, "the same epoch keeps its order")
        track.statusChanged(epoch: nil)
        #expect(track.epoch == "boot-1")
        #expect(track.lastSeq == 0)
        let order1 = track.admit(5, epoch: "boot-1")
        #expect(order1 == .next(skipped: 4, follows: false), "numbering taken from 1")
        track.statusChanged(epoch: "boot-2")
        #expect(track.epoch == "boot-2")
        #expect(track.lastSeq == 0)
        let order2 = track.admit(1, epoch: "boot-2")
        #expect(order2 == .next(skipped: 0, follows: false))
        let order3 = track.admit(2, epoch: "boot-2")
        #expect(order3 == .next(skipped: 0, follows: true))
    }
}
