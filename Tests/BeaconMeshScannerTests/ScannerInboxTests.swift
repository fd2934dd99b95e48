import BeaconMeshBLE
import Testing

@testable import BeaconMeshScanner

/// The scanner loop's mailbox: replayed and radio chunks are held until the loop gives them back, so a replay waits
/// and the radio keeps its own; ticks coalesce; order is kept.
@Suite("Scanner inbox")
struct ScannerInboxTests {
    private static func chunk(_ marker: UInt8) -> HCIEventChunk {
        var chunk = HCIEventChunk()
        chunk.append([0x04, 0x3e, 0x01, marker], timestampMicroseconds: Int64(marker))
        return chunk
    }

    @Test("chunks stay held after they are taken until given back: the radio is refused and a replay waits meanwhile")
    func chunksHeldUntilGivenBack() async {
        let inbox = ScannerInbox(ScannerInputs(chunkLimit: 2))
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
        while inbox.producersWaiting == 0 { await Task.yield() }
        inbox.update { $0.giveBack(1) }
        #expect(await replay.value, "the replay goes on once a chunk is given back")
        guard case .radioPackets? = await inbox.take({ $0.next() }), case .replayedPackets? = await inbox.take({ $0.next() })
        else {
            Issue.record("the chunks did not come in order")
            return
        }
    }

    @Test("one tick waits at most, in its place among the packets")
    func ticksCoalesce() async {
        let inbox = ScannerInbox(ScannerInputs(chunkLimit: 2))
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
