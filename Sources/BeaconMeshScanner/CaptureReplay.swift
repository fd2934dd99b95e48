import BeaconMeshBLE
import BeaconMeshCore
import BeaconMeshService

/// Replays a btsnoop capture as the radio would deliver it: each HCI event with the time it is heard.
///
/// Times follow the recording: at `--speed X` the gap between two records is the recorded one divided by X and the
/// replay sleeps for it; at `--speed max` nothing sleeps and the recorded gaps still set the batch windows. Time never
/// runs backwards even where a capture's clock does.
struct CaptureReplay: Sendable {
    let path: String
    let speed: ReplaySpeed

    /// A timed H4 event.
    struct Packet: Sendable {
        var bytes: [UInt8]
        var time: Timestamp
    }

    /// Reads the whole capture in order, handing over packets in chunks; throws the reader's one-line error.
    func run(start: Timestamp, deliver: @Sendable ([Packet]) async -> Void) async throws {
        let reader = try BTSnoopReader(path: path)
        var firstMicroseconds: Int64?
        var lastTime = start
        var chunk: [Packet] = []
        while let record = try reader.next() {
            if Task.isCancelled { return }
            let packet = record.packet
            guard packet.count > 3, packet[0] == HCIEventParser.h4EventIndicator,
                  packet[1] == HCIEventParser.leMetaEventCode
            else { continue }
            let first = firstMicroseconds ?? record.timestampMicroseconds
            firstMicroseconds = first
            let elapsedMicroseconds = max(0, record.timestampMicroseconds - first)
            var time: Timestamp
            switch speed {
            case .maximum:
                time = start + .microseconds(elapsedMicroseconds)
            case .factor(let factor):
                time = start + .microseconds(Int64(Double(elapsedMicroseconds) / factor))
                let wait = time - WallClock.now()
                if wait > .milliseconds(5) {
                    if !chunk.isEmpty {
                        await deliver(chunk)
                        chunk.removeAll()
                    }
                    try await Task.sleep(for: wait)
                }
            }
            if time < lastTime { time = lastTime }
            lastTime = time
            chunk.append(Packet(bytes: packet, time: time))
            if chunk.count >= 256 {
                await deliver(chunk)
                chunk.removeAll()
            }
        }
        if !chunk.isEmpty { await deliver(chunk) }
    }
}
