import BeaconMeshBLE
import BeaconMeshCaptures
import BeaconMeshCore
import BeaconMeshService

/// Replays a btsnoop capture as the radio would deliver it: each HCI event with the time it is heard, in chunks.
///
/// Times follow the recording: at `--speed X` the gap between two records is the recorded one divided by X and the
/// replay sleeps for it; at `--speed max` nothing sleeps and the recorded gaps still set the batch windows. Time never
/// runs backwards even where a capture's clock does.
struct CaptureReplay: Sendable {
    let path: String
    let speed: ReplaySpeed

    /// How many events a chunk handed over holds (fewer at the end, and before each pause at recorded pace).
    static let eventsPerChunk = 256

    /// Reads the whole capture in order, handing over its LE Meta events in chunks (each read straight into its
    /// chunk's one buffer); throws the reader's one-line error.
    func run(start: Timestamp, deliver: @Sendable (HCIEventChunk) async -> Void) async throws {
        let reader = try BTSnoopReader(path: path)
        var firstMicroseconds: Int64?
        var lastTime = start
        var chunk = Self.emptyChunk()
        while true {
            // Asked once per chunk: a task's cancellation is a thread-local look-up, too dear for every packet.
            if chunk.isEmpty && Task.isCancelled { return }
            // At recorded pace, a packet due later than 5 ms from now waits: what came before it goes out first.
            var pause: (before: HCIEventChunk, wait: Duration)?
            let more = try reader.nextPacket { packet, recordedMicroseconds in
                guard packet.count > 3, packet[0] == HCIEventParser.h4EventIndicator,
                    packet[1] == HCIEventParser.leMetaEventCode
                else { return }
                let first = firstMicroseconds ?? recordedMicroseconds
                firstMicroseconds = first
                let elapsedMicroseconds = max(0, recordedMicroseconds - first)
                var time: Timestamp
                switch speed {
                case .maximum:
                    time = Timestamp(milliseconds: start.milliseconds + elapsedMicroseconds / 1000)
                case .factor(let factor):
                    time = start + .microseconds(Int64(Double(elapsedMicroseconds) / factor))
                    let wait = time - WallClock.now()
                    if wait > .milliseconds(5) {
                        pause = (chunk, wait)
                        chunk = Self.emptyChunk()
                    }
                }
                if time < lastTime { time = lastTime }
                lastTime = time
                chunk.append(packet, timestampMicroseconds: time.milliseconds * 1000)
            }
            if let pause {
                if !pause.before.isEmpty { await deliver(pause.before) }
                try await Task.sleep(for: pause.wait)
            }
            if !more || chunk.count >= Self.eventsPerChunk {
                if !chunk.isEmpty { await deliver(chunk) }
                if !more { return }
                chunk = Self.emptyChunk()
            }
        }
    }

    private static func emptyChunk() -> HCIEventChunk {
        HCIEventChunk(reservingCapacityFor: eventsPerChunk * 64)
    }
}
