import BeaconMeshCore
import BeaconMeshThreads
import Glibc
import Synchronization

/// Reads H4 packets from a file descriptor on a thread of its own and hands each whole packet to a callback.
///
/// The thread waits in `poll` with a timeout (`pollInterval`) and checks a stop flag between waits, so `stop()`
/// returns within about one interval; the blocking `read` never runs on the Swift concurrency pool. With
/// `.packets` framing (a raw HCI socket, a `SOCK_SEQPACKET` socketpair) each read is one packet; with `.stream`
/// (a UART, a pipe, `SOCK_STREAM`) reads are cut into packets by `H4StreamFramer`, whatever the read boundaries.
///
/// `onPacket` runs on the reader thread with a buffer valid only during the call: copy what you keep, return fast.
/// `onEnd` runs once when the thread ends: stopped, end of stream (the peer closed), or a read error.
/// With a `handOver` callback the reader also says when to pass on what `onPacket` gathered: `handOverDelay` after
/// the first packet since the previous hand-over. Meanwhile packets gather in the socket and are read in one go just
/// before (so neither the reader nor the consumer wakes once per packet; a packet is stamped when read, up to about
/// `handOverDelay` after it came). If `handOver` answers that packets are still held (no room yet), it is asked
/// again one `pollInterval` later.
/// The reader never closes the descriptor; its owner does, after `stop()`.
public final class HCIEventReader: Sendable {
    /// How the descriptor delivers packets.
    public enum Framing: Hashable, Sendable {
        /// Each read returns exactly one packet (raw HCI socket, `SOCK_SEQPACKET`).
        case packets
        /// Reads return any slice of an H4 byte stream (UART, pipe, `SOCK_STREAM`).
        case stream
    }

    /// Why the reader thread ended.
    public enum Ending: Hashable, Sendable {
        /// `stop()` was called.
        case stopped
        /// The other end closed the connection (read returned 0, or the socket hung up).
        case endOfStream
        /// Reading failed.
        case failed(HCIError)
    }

    /// The descriptor read from.
    public let descriptor: Int32
    /// The name used in errors (`hci0`).
    public let device: String
    /// How the descriptor delivers packets.
    public let framing: Framing
    /// The longest the thread waits in `poll` before looking at the stop flag.
    public let pollInterval: Duration
    /// The longest a packet given to `onPacket` waits for `handOver`.
    public let handOverDelay: Duration

    private let onPacket: @Sendable (UnsafeRawBufferPointer) -> Void
    private let handOver: (@Sendable () -> Bool)?
    private let onEnd: @Sendable (Ending) -> Void
    private let stopRequested = Atomic<Bool>(false)
    /// The running thread, if any; `nil` before `start()` and after `stop()` joined it.
    private let thread = Mutex<DedicatedThread?>(nil)

    /// A reader of `descriptor`; nothing happens until `start()`.
    public init(
        descriptor: Int32, device: String, framing: Framing, pollInterval: Duration = .milliseconds(50),
        handOverDelay: Duration = .milliseconds(5),
        onPacket: @escaping @Sendable (UnsafeRawBufferPointer) -> Void,
        handOver: (@Sendable () -> Bool)? = nil,
        onEnd: @escaping @Sendable (Ending) -> Void = { _ in }
    ) {
        self.descriptor = descriptor
        self.device = device
        self.framing = framing
        self.pollInterval = pollInterval
        self.handOverDelay = handOverDelay
        self.onPacket = onPacket
        self.handOver = handOver
        self.onEnd = onEnd
    }

    /// A reader of `socket`'s descriptor with the socket's framing.
    public convenience init(
        socket: HCISocket, pollInterval: Duration = .milliseconds(50), handOverDelay: Duration = .milliseconds(5),
        onPacket: @escaping @Sendable (UnsafeRawBufferPointer) -> Void,
        handOver: (@Sendable () -> Bool)? = nil,
        onEnd: @escaping @Sendable (Ending) -> Void = { _ in }
    ) {
        self.init(
            descriptor: socket.descriptor, device: socket.device, framing: socket.framing, pollInterval: pollInterval,
            handOverDelay: handOverDelay, onPacket: onPacket, handOver: handOver, onEnd: onEnd)
    }

    /// Starts the reader thread; does nothing if it already runs. Throws if the system cannot create a thread.
    public func start() throws(HCIError) {
        try thread.withLock { (thread: inout DedicatedThread?) throws(HCIError) in
            guard thread == nil else { return }
            stopRequested.store(false, ordering: .releasing)
            do throws(DedicatedThread.StartError) {
                thread = try DedicatedThread(name: "hci-\(device)") { [self] in run() }
            } catch {
                throw HCIError(device: device, problem: .systemCall(name: "pthread_create", errno: error.code))
            }
        }
    }

    /// Asks the thread to stop and waits until it has (about one `pollInterval`); safe to call more than once,
    /// and from `onPacket` (then it only asks).
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        let handle = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        handle?.join()
    }

    /// Whether the thread was started and not yet stopped by `stop()`.
    public var isRunning: Bool {
        thread.withLock { $0 != nil }
    }

    /// The thread's body: poll, read, hand out packets, until stopped, closed or failed.
    private func run() {
        onEnd(readUntilEnd())
    }

    private func readUntilEnd() -> Ending {
        let chunkSize = 4096
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var framer = H4StreamFramer()
        let pollMilliseconds = Int32(clamping: max(1, pollInterval.wholeMilliseconds))
        let pollNanoseconds = Int64(pollMilliseconds) * 1_000_000
        let delayNanoseconds = max(0, handOverDelay.wholeMilliseconds) * 1_000_000
        /// When the packets read since the last hand-over are due to be handed over (monotonic ns), if any are.
        var handOverDue: Int64?
        let fd = descriptor

        /// Waits up to `timeout` ms for the descriptor and reads what is there: `nil` if nothing came, the ending if
        /// the stream ended.
        /// Whether a read that must not wait can be one `recv(MSG_DONTWAIT)` (sockets) rather than `poll` + `read`.
        var canReceiveWithoutWaiting = framing == .packets
        func readOnce(timeout: Int32) throws(HCIError) -> Ending?? {
            if timeout == 0 && canReceiveWithoutWaiting {
                let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, chunkSize, Int32(MSG_DONTWAIT)) }
                if received < 0 {
                    let code = errno
                    if code == EAGAIN || code == EINTR { return .some(nil) }
                    if code == ENOTSOCK {
                        canReceiveWithoutWaiting = false
                    } else {
                        throw HCIError(device: device, call: "recv", errno: code)
                    }
                } else {
                    if received == 0 { return .endOfStream }
                    buffer.withUnsafeBytes { onPacket(UnsafeRawBufferPointer(rebasing: $0[0..<received])) }
                    return nil
                }
            }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = try HCIError.systemCall("poll", device: device) { poll(&waiting, 1, timeout) }
            if ready == 0 { return .some(nil) }
            if waiting.revents & Int16(POLLNVAL) != 0 { return .failed(HCIError(device: device, problem: .connectionEnded)) }
            let count: Int
            do {
                count = try HCIError.systemCall("read", device: device) {
                    buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, chunkSize) }
                }
            } catch let error where error.problem == .systemCall(name: "read", errno: EAGAIN) {
                return .some(nil)
            }
            if count == 0 { return .endOfStream }
            buffer.withUnsafeBytes { bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                switch framing {
                case .packets: onPacket(chunk)
                case .stream: framer.append(chunk, onPacket)
                }
            }
            return nil
        }

        do {
            while !stopRequested.load(ordering: .acquiring) {
                guard let handOver, let due = handOverDue else {
                    // Idle (or no hand-over wanted): wait for the next packet.
                    if let ending = try readOnce(timeout: pollMilliseconds) {
                        if let ending { return ending }
                        continue
                    }
                    if self.handOver != nil { handOverDue = Self.monotonicNanoseconds() + delayNanoseconds }
                    continue
                }
                // Packets are flowing: let them gather in the socket until the hand-over is due, then read them all.
                // One wake-up per hand-over instead of one per packet; each is stamped when read, at most about
                // `handOverDelay` late.
                let remaining = due - Self.monotonicNanoseconds()
                if remaining > 0 {
                    var pause = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
                    var left = timespec()
                    while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
                }
                for _ in 0..<Self.packetsPerHandOver {
                    guard let ending = try readOnce(timeout: 0) else { continue }
                    if let ending { return ending }
                    break
                }
                handOverDue = handOver() ? Self.monotonicNanoseconds() + pollNanoseconds : nil
            }
            return .stopped
        } catch {
            return .failed(error)
        }
    }

    /// The most packets read in one go before a hand-over (the rest wait for the next one).
    private static let packetsPerHandOver = 4096

    private static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
