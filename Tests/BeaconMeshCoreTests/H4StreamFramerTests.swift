import BeaconMeshCore
import Testing

@Suite("H4 stream framer")
struct H4StreamFramerTests {
    /// Feeds `stream` in the given chunk sizes (cycled) and returns the packets handed out.
    private func packets(_ stream: [UInt8], chunks: [Int]) -> (packets: [[UInt8]], framer: H4StreamFramer) {
        var framer = H4StreamFramer()
        var packets: [[UInt8]] = []
        var offset = 0
        var chunkIndex = 0
        while offset < stream.count {
            let size = min(chunks[chunkIndex % chunks.count], stream.count - offset)
            stream[offset..<(offset + size)].withUnsafeBytes { chunk in
                framer.append(chunk) { packets.append(Array($0)) }
            }
            offset += size
            chunkIndex += 1
        }
        return (packets, framer)
    }

    private let event = HexDigits.bytes("040e0401030c00")!
    private let command = HexDigits.bytes("010c20020100")!
    private let acl = HexDigits.bytes("0220000300010203")!  // ACL: handle 0x0020, length 3 (little-endian 2 bytes)
    private let advert = HexDigits.bytes("043e1202010300bb54c16053dc0602010603ff4cb7")!

    @Test("packets come out whole whatever the read boundaries: byte by byte, odd chunks, all at once")
    func anyBoundaries() {
        let stream = event + command + acl + advert + event
        let expected = [event, command, acl, advert, event]
        for chunks in [[1], [2, 3], [5, 1, 7], [stream.count]] {
            let (result, framer) = packets(stream, chunks: chunks)
            #expect(result == expected, "chunks \(chunks)")
            #expect(framer.bufferedByteCount == 0)
        }
    }

    @Test("an unfinished packet waits for its rest")
    func unfinished() {
        let (result, framer) = packets(event + Array(advert.prefix(10)), chunks: [100])
        #expect(result == [event])
        #expect(framer.bufferedByteCount == 10)
    }

    @Test("bytes that start no packet are skipped and counted, and the stream recovers")
    func resynchronises() {
        let (result, framer) = packets([0x00, 0xFF] + event, chunks: [1])
        #expect(result == [event])
        #expect(framer.skippedBytes == 2)
    }
}
