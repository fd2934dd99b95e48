import BeaconMeshBLE
import BeaconMeshThreads

/// What the scanner loop takes next, in a `Mailbox`: its inputs in arrival order, with one tick at most waiting, and
/// the chunks of replayed or radio packets handed over and not yet given back bounded twice, by count (`chunkLimit`)
/// and by bytes (`byteLimit`, of the chunks' buffers).
///
/// The inbox is full once its chunks reach either limit. A chunk is let in while less than `byteLimit` is held, so
/// the hold stays under `byteLimit` plus one chunk, however big each chunk is (the radio's can be large: what its
/// reader gathered while the inbox was full, up to its buffer of events), and under `chunkLimit` chunks however small.
/// A chunk taken is not kept by the inbox: what stays held until the loop gives it back is its count and bytes, while
/// the chunk itself lives only as long as the loop works on it.
///
/// A capture replay waits for room (`putWhenRoom`) and gets its chunks back only while the batch queue has room, so
/// it runs no faster than the broker takes its batches; the radio's reader thread does not wait (`putIfRoom`: while
/// the inbox is full it gathers, up to its buffer) and gets each chunk back once it is processed. Simulated packets
/// are paced by time, ticks coalesce, and the source's end comes once.
typealias ScannerInbox = Mailbox<ScannerInputs>

/// The scanner loop's waiting inputs (see `ScannerInbox`).
struct ScannerInputs: MailboxContents {
    private var inputs = BoundedQueue<ScannerService.Input>(capacity: .max)
    private var tickWaiting = false
    /// Chunks of replayed or radio packets handed over and not yet given back.
    private(set) var held = ChunkHold()
    /// How many chunks may be held before a replay waits and the radio keeps its own.
    let chunkLimit: Int
    /// How many bytes of chunks may be held before a replay waits and the radio keeps its own.
    let byteLimit: Int

    init(chunkLimit: Int, byteLimit: Int) {
        self.chunkLimit = max(1, chunkLimit)
        self.byteLimit = max(1, byteLimit)
    }

    var isFull: Bool { held.chunks >= chunkLimit || held.bytes >= byteLimit }

    /// Adds `input` last; a tick only if none waits already.
    mutating func append(_ input: ScannerService.Input) {
        switch input {
        case .tick:
            guard !tickWaiting else { return }
            tickWaiting = true
        case .replayedPackets(let chunk), .radioPackets(let chunk):
            held += ChunkHold(chunk)
        case .packets, .sourceFinished, .sourceFailed, .nodeConfig:
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

    /// Gives back chunks the loop has done with (their count and bytes, as `ChunkHold(chunk)` made them).
    mutating func giveBack(_ hold: ChunkHold) {
        held -= hold
    }
}
