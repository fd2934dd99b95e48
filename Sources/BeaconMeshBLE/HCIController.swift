import BeaconMeshCaptures
import BeaconMeshCore
import Synchronization

/// A conversation with one controller: sends a command and waits for its answer, while the reader thread streams
/// every other event. `LEScanner` and `LEAdvertiser` are built on it.
///
/// One reader thread reads the socket for the controller's whole life. Command Complete / Command Status events go to
/// the command waiting for them (matched by opcode) at once; every other event is gathered into a chunk that goes to
/// `onEvents` a few milliseconds later (and each event to the recorder, which sees everything). A command not
/// answered within `commandTimeout` fails with `noAnswer`. When the reader ends — closed, adapter gone, read error —
/// waiting commands fail, the last chunk is offered and `waitUntilEnded()` returns.
final class HCIController: Sendable {
    let socket: HCISocket
    let commandTimeout: Duration
    /// Finishes when the reader has ended.
    private let ended: AsyncStream<Never>

    private let router: Router
    private let reader: HCIEventReader

    /// A controller on `socket`. Events other than command answers go to `onEvents` in chunks (on the reader
    /// thread; `nil` ignores them); when it answers `false` (no room) the chunk is kept and offered again later,
    /// growing up to `bufferedEvents` events, beyond which new events are dropped and counted in `droppedEvents`.
    init(
        socket: HCISocket, recorder: BTSnoopRecorder?, commandTimeout: Duration, bufferedEvents: Int,
        pollInterval: Duration = .milliseconds(50), handOverDelay: Duration = .milliseconds(5),
        onEvents: (@Sendable (HCIEventChunk) -> Bool)?
    ) {
        self.socket = socket
        self.commandTimeout = commandTimeout
        let (ended, endSignal) = AsyncStream.makeStream(of: Never.self)
        self.ended = ended
        let router = Router(
            device: socket.device, onEvents: onEvents, bufferedEvents: max(1, bufferedEvents), endSignal: endSignal,
            recorder: recorder)
        self.router = router
        reader = HCIEventReader(
            socket: socket, pollInterval: pollInterval, handOverDelay: handOverDelay,
            onPacket: { packet in router.handle(packet) },
            handOver: { router.handOver() },
            onEnd: { ending in router.end(ending) })
    }

    /// Events dropped because the consumer of `onEvents` had no room for them.
    var droppedEvents: Int { router.dropped.load(ordering: .relaxed) }

    /// Returns once the reader has ended (stopped, or the connection ended or failed), or the calling task is
    /// cancelled. One caller at a time.
    func waitUntilEnded() async {
        for await _ in ended {}
    }

    /// Why `events` finished, if the connection ended or failed rather than being shut down.
    var failure: HCIError? { router.failure }

    /// Starts reading the socket.
    func start() throws(HCIError) {
        try reader.start()
    }

    /// Sends `command` and returns the controller's successful answer; throws its refusal, `noAnswer` after
    /// `commandTimeout`, or `connectionEnded`.
    func send(_ command: HCICommand) async throws(HCIError) -> HCICommandResponse {
        let opcode = command.opcode
        let device = socket.device
        let timeout = commandTimeout
        let router = self.router
        var timer: Task<Void, Never>?
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            guard let token = router.wait(for: opcode, continuation) else { return }
            router.recorder?.record(command: command)
            do throws(HCIError) {
                try socket.send(command)
            } catch {
                router.answer(opcode, token: token, with: .failure(error))
                return
            }
            timer = Task {
                do { try await Task.sleep(for: timeout) } catch { return }
                router.answer(
                    opcode, token: token,
                    with: .failure(HCIError(device: device, problem: .noAnswer(command: opcode, timeout: timeout))))
            }
        }
        timer?.cancel()
        let response = try result.get()
        guard response.status.isSuccess else {
            throw HCIError(device: device, command: opcode, status: response.status)
        }
        return response
    }

    /// Stops the reader thread, fails waiting commands, finishes `events` and closes the socket. Idempotent.
    func shutDown() {
        reader.stop()
        router.end(.stopped)
        socket.close()
    }

    typealias Answer = Result<HCICommandResponse, HCIError>

    /// Routes what the reader thread reads: answers to their commands, everything else to the event stream.
    private final class Router: Sendable {
        struct Waiter {
            var token: Int
            var continuation: CheckedContinuation<Answer, Never>
        }

        struct State {
            var waiters: [HCIOpcode: Waiter] = [:]
            var nextToken = 0
            /// Set once the reader has ended: new commands fail at once.
            var ended = false
            /// Why the reader ended, unless it was stopped on purpose.
            var failure: HCIError?
        }

        let device: String
        let onEvents: (@Sendable (HCIEventChunk) -> Bool)?
        let bufferedEvents: Int
        let endSignal: AsyncStream<Never>.Continuation
        let recorder: BTSnoopRecorder?
        let dropped = Atomic<Int>(0)
        private let state = Mutex(State())
        /// Events read and not yet handed over: touched by the reader thread, and by `end` once it has stopped.
        private let pending = Mutex(HCIEventChunk())

        init(
            device: String, onEvents: (@Sendable (HCIEventChunk) -> Bool)?, bufferedEvents: Int,
            endSignal: AsyncStream<Never>.Continuation, recorder: BTSnoopRecorder?
        ) {
            self.device = device
            self.onEvents = onEvents
            self.bufferedEvents = bufferedEvents
            self.endSignal = endSignal
            self.recorder = recorder
        }

        /// Registers `continuation` as waiting for `opcode`'s answer and returns its token; if that is impossible
        /// (the reader ended, or the same command is already waiting) resumes it with the error and returns `nil`.
        func wait(for opcode: HCIOpcode, _ continuation: CheckedContinuation<Answer, Never>) -> Int? {
            let registration: Result<Int, HCIError> = state.withLock { state in
                if state.ended { return .failure(HCIError(device: device, problem: .connectionEnded)) }
                // One command per opcode at a time: its answer could not be told apart.
                if state.waiters[opcode] != nil { return .failure(HCIError(device: device, problem: .busy(command: opcode))) }
                state.nextToken += 1
                state.waiters[opcode] = Waiter(token: state.nextToken, continuation: continuation)
                return .success(state.nextToken)
            }
            switch registration {
            case .success(let token):
                return token
            case .failure(let refusal):
                continuation.resume(returning: .failure(refusal))
                return nil
            }
        }

        /// Resumes the command waiting for `opcode` with `answer`, if it is still the one with `token` (`nil`: any).
        func answer(_ opcode: HCIOpcode, token: Int?, with answer: Answer) {
            let waiter = state.withLock { state -> Waiter? in
                guard let waiter = state.waiters[opcode], token == nil || waiter.token == token else { return nil }
                state.waiters[opcode] = nil
                return waiter
            }
            waiter?.continuation.resume(returning: answer)
        }

        /// Why the reader ended, unless it was stopped on purpose.
        var failure: HCIError? { state.withLock { $0.failure } }

        /// Called on the reader thread for every packet.
        func handle(_ packet: UnsafeRawBufferPointer) {
            let timestamp = HCIEventPacket.currentTimestampMicroseconds()
            recorder?.record(event: packet, timestampMicroseconds: timestamp)
            if let response = HCICommandResponse(h4Packet: packet) {
                if response.isFinal { answer(response.opcode, token: nil, with: .success(response)) }
                return
            }
            guard onEvents != nil, packet.first == HCIEventParser.h4EventIndicator else { return }
            let kept = pending.withLock { pending in
                guard pending.count < bufferedEvents else { return false }
                pending.append(packet, timestampMicroseconds: timestamp)
                return true
            }
            if !kept { dropped.add(1, ordering: .relaxed) }
        }

        /// Offers the gathered events to `onEvents`; returns whether some are still held (it had no room).
        func handOver() -> Bool {
            guard let onEvents else { return false }
            return pending.withLock { pending in
                guard !pending.isEmpty else { return false }
                let chunk = pending
                // A fresh buffer for the next chunk, sized like this one; the chunk handed over keeps its own.
                guard onEvents(chunk) else { return true }
                pending = HCIEventChunk(reservingCapacityFor: chunk.byteCount)
                return false
            }
        }

        /// Called when the reader ends: fails every waiting command and finishes the event stream.
        func end(_ ending: HCIEventReader.Ending) {
            let error: HCIError
            switch ending {
            case .failed(let failure): error = failure
            case .stopped, .endOfStream: error = HCIError(device: device, problem: .connectionEnded)
            }
            let waiters = state.withLock { state in
                if !state.ended, ending != .stopped { state.failure = error }
                state.ended = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.continuation.resume(returning: .failure(error)) }
            _ = handOver()
            endSignal.finish()
        }
    }
}
