import BeaconMeshBLE
import Testing

@Suite("HCI event chunk")
struct HCIEventChunkTests {
    /// Events of every length from 0 to 300 bytes (and one cut at 65,535), with their times.
    static func events() -> [HCIEventPacket] {
        var events = (0...300).map { length in
            HCIEventPacket(
                bytes: (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }, timestampMicroseconds: Int64(length) * -977)
        }
        events.append(HCIEventPacket(bytes: [UInt8](repeating: 0xAB, count: 70_000), timestampMicroseconds: .max))
        return events
    }

    @Test("events come back in order with their times, whatever room the chunk started with", arguments: [0, 1, 64, 1 << 20])
    func roundTrip(room: Int) {
        var chunk = HCIEventChunk(reservingCapacityFor: room)
        let events = Self.events()
        for event in events { chunk.append(event.bytes, timestampMicroseconds: event.timestampMicroseconds) }
        let expected = events.map { HCIEventPacket(bytes: Array($0.bytes.prefix(65_535)), timestampMicroseconds: $0.timestampMicroseconds) }
        #expect(chunk.count == events.count)
        #expect(chunk.packets == expected)
        #expect(chunk.byteCount == expected.reduce(0) { $0 + 10 + $1.bytes.count })
    }

    @Test("emptied, a chunk holds nothing; refilled, only the new events; equal chunks ignore spare room")
    func removeAllAndEquality() {
        var chunk = HCIEventChunk(reservingCapacityFor: 4096)
        chunk.append([0x04, 0x3E, 0x01, 0x02], timestampMicroseconds: 1)
        chunk.append([0x04, 0x3E, 0x01, 0x03], timestampMicroseconds: 2)
        chunk.removeAll()
        #expect(chunk.isEmpty && chunk.byteCount == 0 && chunk.packets.isEmpty)
        #expect(chunk == HCIEventChunk())
        chunk.append([0x04, 0x0E], timestampMicroseconds: 3)
        #expect(chunk.packets == [HCIEventPacket(bytes: [0x04, 0x0E], timestampMicroseconds: 3)])

        var other = HCIEventChunk()
        other.append([0x04, 0x0E], timestampMicroseconds: 3)
        #expect(chunk == other)
        other.append([0x04], timestampMicroseconds: 4)
        #expect(chunk != other)
        var differentTime = HCIEventChunk()
        differentTime.append([0x04, 0x0E], timestampMicroseconds: 5)
        #expect(chunk != differentTime)
    }
}
