import BeaconMeshCaptures
import BeaconMeshCore
import Synchronization

/// Records what the radio hears (and the commands sent to it) into a btsnoop file, from any thread.
///
/// A thread-safe front for `BTSnoopWriter` (datalink 1002, H4): the HCI reader thread calls `record(event:)` for each
/// event it reads, and the command path `record(command:)`, so the file reads like `btmon -w` output and replays with
/// `--source btsnoop:PATH`. Recording must never stop the scanner: the first write error is kept in `failure`, later
/// packets are not written, and `close()` reports it.
public final class BTSnoopRecorder: Sendable {
    /// The capture file's path, as given.
    public let path: String

    private struct State {
        var writer: BTSnoopWriter?
        var failure: BTSnoopError?
        var recordCount = 0
    }

    /// The writer and its outcome. `Mutex` owns the (non-`Sendable`) writer, so only one thread at a time touches it.
    private let state: Mutex<State>

    /// Creates (or empties) `path` and writes the btsnoop header; throws if the file cannot be written.
    public init(path: String) throws(BTSnoopError) {
        self.path = path
        let writer = try BTSnoopWriter(path: path)
        state = Mutex(State(writer: writer))
    }

    /// Appends an HCI event the controller sent (H4 framing, `04 …`), received at `timestampMicroseconds`.
    public func record(
        event packet: UnsafeRawBufferPointer,
        timestampMicroseconds: Int64 = HCIEventPacket.currentTimestampMicroseconds()
    ) {
        record(h4Packet: packet, timestampMicroseconds: timestampMicroseconds, received: true)
    }

    /// Appends a received event.
    public func record(_ event: HCIEventPacket) {
        event.bytes.withUnsafeBytes { record(event: $0, timestampMicroseconds: event.timestampMicroseconds) }
    }

    /// Appends a command the host sent, now.
    public func record(command: HCICommand) {
        command.packet.withUnsafeBytes {
            record(h4Packet: $0, timestampMicroseconds: HCIEventPacket.currentTimestampMicroseconds(), received: false)
        }
    }

    /// Appends one H4 packet; `received` is true for what the controller sent.
    public func record(h4Packet packet: UnsafeRawBufferPointer, timestampMicroseconds: Int64, received: Bool) {
        // A copy (an Array is Sendable) may enter the writer's lock; the caller's buffer pointer may not.
        let bytes = Array(packet)
        state.withLock { state in
            guard let writer = state.writer else { return }
            let outcome = bytes.withUnsafeBytes { packet in
                Result { () throws(BTSnoopError) in
                    try writer.write(h4Packet: packet, timestampMicroseconds: timestampMicroseconds, received: received)
                }
            }
            switch outcome {
            case .success:
                state.recordCount += 1
            case .failure(let error):
                state.failure = error
                state.writer = nil
            }
        }
    }

    /// The first write error, if recording stopped because of one.
    public var failure: BTSnoopError? {
        state.withLock { $0.failure }
    }

    /// How many packets were written.
    public var recordCount: Int {
        state.withLock { $0.recordCount }
    }

    /// Closes the file; throws the first write error, or the close error. Later records are ignored.
    public func close() throws(BTSnoopError) {
        let outcome: Result<Void, BTSnoopError> = state.withLock { state in
            let writer = state.writer
            state.writer = nil
            if let failure = state.failure { return .failure(failure) }
            do throws(BTSnoopError) {
                try writer?.close()
                return .success(())
            } catch {
                state.failure = error
                return .failure(error)
            }
        }
        try outcome.get()
    }
}
