import BeaconMeshBLE
import BeaconMeshTesting
import BeaconMeshThreads
import Testing

@testable import BeaconMeshScanner

/// The scanner loop's mailbox: replayed and radio chunks are held until the loop gives them back, bounded in count and
/// in bytes, so a replay waits and the radio keeps its own; ticks coalesce; order is kept.
@Suite("Scanner inbox")
struct ScannerInboxTests {
    private static func chunk(_ marker: UInt8, bufferBytes: Int = 0) -> HCIEventChunk {
        var chunk = HCIEventChunk(reservingCapacityFor: bufferBytes)
        chunk.append([0x04, 0x3e, 0x01, marker], timestampMicroseconds: Int64(marker))
        return chunk
    }

    /// Waits (at most 10 s) until a producer waits for room in `inbox`.
    private static func producerWaits(in inbox: ScannerInbox) async -> Bool {
        await eventually(timeout: .seconds(10), interval: .milliseconds(1)) { inbox.producersWaiting > 0 }
    }

    @Test("chunks stay held after they are taken until given back: the radio is refused and a replay waits meanwhile")
    func chunksHeldUntilGivenBack() async {
        let inbox = ScannerInbox(ScannerInputs(chunkLimit: 2, byteLimit: 1 << 20))
        #expect(inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(1))) })
        #expect(inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(2))) })
        #expect(!inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(3))) }, "a third chunk is refused")
        guard case .radioPackets(let first)? = await inbox.take({ $0.next() }) else {
            Issue.record("the first chunk did not come first")
            return
        }
        #expect(first == Self.chunk(1))
        #expect(!inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(3))) }, "taken is not yet given back")

        let replay = Task { await inbox.putWhenRoom { $0.append(.replayedPackets(Self.chunk(4))) } }
        #expect(await Self.producerWaits(in: inbox), "the replay waits while two chunks are held")
        inbox.update { $0.giveBack(ChunkHold(first)) }
        #expect(await replay.value, "the replay goes on once a chunk is given back")
        guard case .radioPackets? = await inbox.take({ $0.next() }), case .replayedPackets? = await inbox.take({ $0.next() })
        else {
            Issue.record("the chunks did not come in order")
            return
        }
    }

    @Test("once the chunks held reach the byte budget the radio is refused and a replay waits, with fewer chunks than the count allows")
    func chunksBoundedInBytes() async {
        let inbox = ScannerInbox(ScannerInputs(chunkLimit: 4, byteLimit: 64 << 10))
        let big = Self.chunk(1, bufferBytes: 40 << 10)
        #expect(big.bufferByteCount == 40 << 10)
        #expect(inbox.putIfRoom { $0.append(.radioPackets(big)) })
        #expect(inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(2, bufferBytes: 40 << 10))) }, "40 kB held: under the budget")
        #expect(!inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(3))) }, "80 kB held in two chunks of four: full")
        #expect(inbox.takeNow { $0.held } == ChunkHold(chunks: 2, bytes: 80 << 10))

        let replay = Task { await inbox.putWhenRoom { $0.append(.replayedPackets(Self.chunk(4))) } }
        guard await Self.producerWaits(in: inbox) else {
            Issue.record("the replay did not wait: 80 kB of chunks held did not fill a 64 kB budget")
            return
        }
        guard case .radioPackets(let first)? = await inbox.take({ $0.next() }) else {
            Issue.record("the first chunk did not come first")
            return
        }
        #expect(inbox.producersWaiting == 1, "a chunk taken is still held until it is given back")
        inbox.update { $0.giveBack(ChunkHold(first)) }
        #expect(await replay.value, "the replay goes on once the bytes held are under the budget again")
        #expect(inbox.takeNow { $0.held.chunks } == 2)
    }

    @Test("a chunk bigger than the whole budget is let in when nothing is held, and alone")
    func oversizedChunkComesAlone() {
        let inbox = ScannerInbox(ScannerInputs(chunkLimit: 4, byteLimit: 16 << 10))
        #expect(inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(1, bufferBytes: 200 << 10))) })
        #expect(!inbox.putIfRoom { $0.append(.radioPackets(Self.chunk(2))) })
    }

    @Test("one tick waits at most, in its place among the packets")
    func ticksCoalesce() async {
        let inbox = ScannerInbox(ScannerInputs(chunkLimit: 2, byteLimit: 1 << 20))
        inbox.put { $0.append(.tick) }
        inbox.put { $0.append(.packets(Self.chunk(1))) }
        inbox.put { $0.append(.tick) }
        inbox.put { $0.append(.sourceFinished) }
        var kinds: [String] = []
        while let input = inbox.takeNow({ $0.next() }) {
            switch input {
            case .tick: kinds.append("tick")
            case .packets: kinds.append("packets")
            case .sourceFinished: kinds.append("finished")
            default: kinds.append("other")
            }
        }
        #expect(kinds == ["tick", "packets", "finished"])
        inbox.put { $0.append(.tick) }
        #expect(inbox.takeNow { $0.next() } != nil, "a tick is taken again once the waiting one was taken")
    }
}
