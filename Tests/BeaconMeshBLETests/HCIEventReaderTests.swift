import BeaconMeshBLE
import BeaconMeshCore
import BeaconMeshTesting
import Foundation
import Testing

@Suite("HCI event reader over a socketpair", .timeLimit(.minutes(3)))
struct HCIEventReaderTests {
    @Test(
        "SOCK_SEQPACKET: the captures' interleaved legacy, extended and multi-report events arrive whole and decode to exactly the same beacons"
    )
    func seqpacketDeliversEveryEvent() async throws {
        let events = try CapturedEvents.interleavedStream()
        #expect(events.contains { $0[1] == 0x3E && $0[3] == 0x02 && $0[4] > 1 }, "multi-report legacy events")
        #expect(events.contains { $0[1] == 0x3E && $0[3] == 0x0D && $0[4] > 1 }, "multi-report extended events")
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        let log = ReaderLog()
        let reader = HCIEventReader(
            descriptor: pair.near, device: "pair", framing: .packets, onPacket: log.add, onEnd: log.end)
        try reader.start()
        let writer = Thread {
            for event in events { try? writeAll(pair.far, event) }
            close(pair.far)
        }
        writer.start()
        #expect(await log.ending() == .endOfStream)
        reader.stop()
        close(pair.near)
        #expect(log.packets == events)
        // The captures hold 40 beacon frames among some 2 300 adverts; the multi-report events repeat them.
        let expected = CapturedEvents.beacons(in: events)
        #expect(expected.count >= 40)
        #expect(CapturedEvents.beacons(in: log.packets) == expected)
        let reports = CapturedEvents.reports(in: events)
        #expect(reports.count > 2000)
        #expect(CapturedEvents.reports(in: log.packets) == reports)
    }

    @Test("SOCK_STREAM: events split across writes and several per write come out whole, in order", arguments: [7, 64, 300])
    func streamReassemblesEvents(largestWrite: Int) async throws {
        let events = try CapturedEvents.interleavedStream()
        let stream = events.flatMap { $0 }
        let pair = try SocketPair(type: Int32(SOCK_STREAM.rawValue))
        let log = ReaderLog()
        let reader = HCIEventReader(
            descriptor: pair.near, device: "pair", framing: .stream, onPacket: log.add, onEnd: log.end)
        try reader.start()
        let writer = Thread {
            var sizes = ChunkSizes(state: UInt64(largestWrite))
            var offset = 0
            while offset < stream.count {
                let size = min(sizes.next(upTo: largestWrite), stream.count - offset)
                try? writeAll(pair.far, Array(stream[offset..<(offset + size)]))
                offset += size
            }
            close(pair.far)
        }
        writer.start()
        #expect(await log.ending() == .endOfStream)
        reader.stop()
        close(pair.near)
        #expect(log.packets.count == events.count)
        #expect(log.packets == events)
        #expect(CapturedEvents.beacons(in: log.packets) == CapturedEvents.beacons(in: events))
        #expect(CapturedEvents.reports(in: log.packets) == CapturedEvents.reports(in: events))
    }

    @Test("stop() ends an idle reader thread within a poll interval, and says it was stopped")
    func stopIsPrompt() async throws {
        let pair = try SocketPair(type: Int32(SOCK_SEQPACKET.rawValue))
        defer {
            close(pair.near)
            close(pair.far)
        }
        let log = ReaderLog()
        let reader = HCIEventReader(
            descriptor: pair.near, device: "pair", framing: .packets, pollInterval: .milliseconds(50),
            onPacket: log.add, onEnd: log.end)
        try reader.start()
        #expect(reader.isRunning)
        // One event through: the thread has run its loop and is back waiting in poll, idle.
        try writeAll(pair.far, [0x04, 0x0e, 0x01, 0x01])
        #expect(await eventually(timeout: .seconds(10)) { log.packets.count == 1 })
        let clock = ContinuousClock()
        let took = clock.measure { reader.stop() }
        #expect(took < .milliseconds(500))
        #expect(!reader.isRunning)
        #expect(await log.ending() == .stopped)
        reader.stop()  // a second stop does nothing
    }

    @Test("a reader whose descriptor is not readable ends with an error instead of spinning")
    func badDescriptorFails() async throws {
        let log = ReaderLog()
        let reader = HCIEventReader(descriptor: 999_999, device: "nothing", framing: .packets, onPacket: log.add, onEnd: log.end)
        try reader.start()
        let ending = await log.ending()
        reader.stop()
        guard case .failed(let error) = ending else {
            Issue.record("expected a failure, got \(String(describing: ending))")
            return
        }
        #expect(error.problem == .connectionEnded)
    }
}
