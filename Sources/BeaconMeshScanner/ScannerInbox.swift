import BeaconMeshThreads

/// What the scanner loop takes next, in a `Mailbox`: its inputs in arrival order, with one tick at most waiting, and
/// at most `chunkLimit` chunks of replayed or radio packets handed over and not yet given back.
///
/// A capture replay waits for room (`putWhenRoom`) and gets its chunks back only while the batch queue has room, so
/// it runs no faster than the broker takes its batches; the radio's reader thread does not wait (`putIfRoom`: while
/// the loop is busy it gathers, up to its buffer) and gets each chunk back once it is processed. Simulated packets
/// are paced by time, ticks coalesce, and the source's end comes once.
typealias ScannerInbox = Mailbox<ScannerInputs>

/// The scanner loop's waiting inputs (see `ScannerInbox`).
struct ScannerInputs: MailboxContents {
    private var inputs = BoundedQueue<ScannerService.Input>(capacity: .max)
    private var tickWaiting = false
    /// Chunks of replayed or radio packets handed over and not yet given back.
    private(set) var chunksHeld = 0
    /// How many chunks may be held before a replay waits and the radio keeps its own.
    let chunkLimit: Int

    init(chunkLimit: Int) {
        self.chunkLimit = max(1, chunkLimit)
    }

    var isFull: Bool { chunksHeld >= chunkLimit }

    /// Adds `input` last; a tick only if none waits already.
    mutating func append(_ input: ScannerService.Input) {
        switch input {
        case .tick:
            guard !tickWaiting else { return }
            tickWaiting = true
        case .replayedPackets, .radioPackets:
            chunksHeld += 1
        case .packets, .sourceFinished, .sourceFailed:
            break
        }
        inputs.append(input)
    }

    /// The oldest input, removed; `nil` if none waits.
    mutating func next() -> ScannerService.Input? {
        let input = inputs.popFirst()
        if case .tick? = input { tickWaiting = false }
        return input
    }

    /// Gives back `count` chunks the loop has done with.
    mutating func giveBack(_ count: Int) {
        chunksHeld = max(0, chunksHeld - count)
    }
}
