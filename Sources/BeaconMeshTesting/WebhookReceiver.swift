import Crypto
import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// A webhook receiver of the tests' own: Hummingbird on a free loopback port, over HTTPS with a test CA's certificate
/// (or plain HTTP), answering each POST as `answer` says and keeping what it received. It checks signatures the way
/// `deploy/README.md` tells a receiver to, and drops duplicates by event id the way a receiver should.
public final class WebhookReceiver: Sendable {
    /// One POST as it arrived.
    public struct Received: Sendable {
        public var eventID: String
        public var timestamp: String
        public var signature: String
        public var body: [UInt8]
        public var at: ContinuousClock.Instant
        /// The status it was answered with.
        public var status = 0
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// How to answer a POST.
    public enum Answer: Sendable {
        case status(Int)
        /// A redirect to `location` (which must not be followed).
        case redirect(String)
        /// An answer only after `delay`.
        case slow(Duration)
        /// A 200 whose body is `bytes` long.
        case huge(Int)
    }

    public let url: String
    public let port: Int
    private let state: Shared
    private let task: Task<Void, any Error>

    /// What the server's handler and the test share.
    private final class Shared: Sendable {
        let received = Mutex<[Received]>([])
        /// A constant, not a `Mutex`'s value: a closure read out of a `Mutex` (`withLock { $0 }`) came back wrapped in
        /// one more reabstraction thunk each time, and every answer walked the whole chain (75 % of the benchmark's CPU
        /// after 30 000 POSTs).
        let answer: @Sendable (Received) -> Answer

        init(_ answer: @escaping @Sendable (Received) -> Answer) {
            self.answer = answer
        }
    }

    /// Starts a receiver at `path`; over HTTPS when given `certificates` (made by `TestCertificates.generate`).
    public static func start(
        certificates: TestCertificates?, path: String = "/hooks/beaconmesh",
        answer: @escaping @Sendable (Received) -> Answer = { _ in .status(200) }
    ) async throws -> WebhookReceiver {
        let port = try FreePort.next()
        var tls: TLSConfiguration?
        if let certificates {
            tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificates.serverCertificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: certificates.serverKey, format: .pem)))
        }
        let scheme = tls == nil ? "http" : "https"
        let receiver = try WebhookReceiver(url: "\(scheme)://127.0.0.1:\(port)\(path)", port: port, tls: tls, path: path, answer: answer)
        try await receiver.waitUntilListening()
        return receiver
    }

    private init(
        url: String, port: Int, tls: TLSConfiguration?, path: String, answer: @escaping @Sendable (Received) -> Answer
    ) throws {
        self.url = url
        self.port = port
        let state = Shared(answer)
        self.state = state
        let router = Router()
        router.post(RouterPath(path)) { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let received = Received(
                eventID: request.headers[.init("BeaconMesh-Event-Id")!] ?? "",
                timestamp: request.headers[.init("BeaconMesh-Timestamp")!] ?? "",
                signature: request.headers[.init("BeaconMesh-Signature")!] ?? "", body: Array(buffer: body), at: .now)
            var answered = received
            let answer = state.answer(received)
            switch answer {
            case .status(let status): answered.status = status
            case .redirect: answered.status = 307
            case .slow, .huge: answered.status = 200
            }
            state.received.withLock { $0.append(answered) }
            switch answer {
            case .status(let status):
                return Response(status: .init(code: status))
            case .redirect(let location):
                return Response(status: .temporaryRedirect, headers: [.location: location])
            case .slow(let delay):
                try await Task.sleep(for: delay)
                return Response(status: .ok)
            case .huge(let size):
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: size)))
            }
        }
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .critical
        let application = Application(
            router: router, server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
            configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        task = Task { try await application.runService() }
    }

    /// Generous: an in-process server whose task waits for a busy concurrency pool (a start, not a timing under test).
    private func waitUntilListening() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if FreePort.isAccepting(port: port) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestSupportError("the webhook receiver did not listen on 127.0.0.1:\(port)")
    }

    /// How many POSTs were received (without copying them).
    public var count: Int { state.received.withLock { $0.count } }

    /// Every POST received, in arrival order.
    public var received: [Received] { state.received.withLock { $0 } }

    /// The POSTs received with distinct event ids, first of each, in arrival order: what a receiver that drops
    /// duplicates keeps.
    public var deduplicated: [Received] {
        var seen: Set<String> = []
        return received.filter { seen.insert($0.eventID).inserted }
    }

    /// Whether `received` has `count` POSTs matching `predicate` within `timeout`.
    public func waitFor(
        _ count: Int = 1, timeout: Duration = .seconds(10), where predicate: @escaping @Sendable (Received) -> Bool = { _ in true }
    ) async -> Bool {
        await eventually(timeout: timeout) { self.received.filter(predicate).count >= count }
    }

    /// Whether `received`'s signature is the contract's HMAC-SHA256 of "{timestamp}.{body}" with `secret`, and its
    /// timestamp within 5 minutes: `deploy/README.md`'s Swift example, word for word.
    public static func verifies(_ received: Received, secret: [UInt8]) -> Bool {
        verified(secret: secret, timestamp: received.timestamp, signature: received.signature, body: received.body)
    }

    static func verified(secret: [UInt8], timestamp: String, signature: String, body: [UInt8]) -> Bool {
        guard let time = Int64(timestamp), abs(time - Int64(Date().timeIntervalSince1970)) < 300, signature.hasPrefix("sha256="),
            let mac = hexBytes(signature.dropFirst(7))
        else { return false }
        let signed = Array("\(timestamp).".utf8) + body
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: signed, using: SymmetricKey(data: secret))
    }

    static func hexBytes(_ hex: Substring) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        let bytes = stride(from: 0, to: 64, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
        return bytes.contains(nil) ? nil : bytes.compactMap { $0 }
    }

    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
