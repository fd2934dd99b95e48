import AsyncHTTPClient
import BeaconMeshCore
import BeaconMeshThreads
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// POSTs signed bodies to one webhook endpoint (async-http-client), from a blocking thread (its courier's): HTTPS
/// verified against the system's store or the endpoint's `cafile`, redirects not followed, an answer cut off after
/// `timeout` or past `answerLimit` bytes.
final class WebhookClient: Sendable {
    /// What became of one POST.
    enum Outcome: Equatable, Sendable {
        /// Any 2xx.
        case delivered(status: Int)
        /// A 4xx other than 408 and 429: the receiver will not take it; not tried again.
        case refused(status: Int)
        /// Anything else (a 5xx, 408, 429, a redirect, a timeout, no connection): tried again later.
        case failed(String)
    }

    let endpoint: WebhookEndpoint
    /// The endpoint's URL, parsed once.
    private let target: URL
    private let client: HTTPClient
    /// The one event loop its requests and connections run on: no hop between loops per POST.
    private let loop: any EventLoop
    private let timeout: Duration
    private let answerLimit: Int

    /// How long a receiver may take to answer, and how much of its answer is read, before the POST counts as failed.
    static let standardTimeout: Duration = .seconds(10)
    static let standardAnswerLimit = 64 * 1024

    /// Whether the POSTs may wait for idle cores (a courier's, from the durable outbox) or are awaited by a person
    /// (`webhooks test`).
    enum Urgency: Sendable {
        case now
        case whenIdle
    }

    init(
        endpoint: WebhookEndpoint, urgency: Urgency = .now, timeout: Duration = standardTimeout,
        answerLimit: Int = standardAnswerLimit
    ) throws {
        self.endpoint = endpoint
        guard let target = URL(string: endpoint.url) else { throw HTTPClientError.invalidURL }
        self.target = target
        self.timeout = timeout
        self.answerLimit = answerLimit
        var tls = TLSConfiguration.makeClientConfiguration()
        if let cafile = endpoint.cafile { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(cafile)) }
        let seconds = Int64(timeout.components.seconds)
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(min(seconds, 5)), read: .seconds(seconds)))
        configuration.httpVersion = .http1Only
        configuration.decompression = .disabled
        loop = urgency == .whenIdle ? Self.idleLoop : MultiThreadedEventLoopGroup.singleton.next()
        client = HTTPClient(eventLoopGroupProvider: .shared(loop), configuration: configuration)
    }

    /// The event loop the couriers' requests and connections run on: one thread at idle priority (as the couriers),
    /// so that on busy cores webhooks yield to the decisions and their events. Lives as long as the program.
    private static let idleLoop: any EventLoop = {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()
        try? loop.submit { DedicatedThread.setCurrentThread(.idle) }.wait()
        return loop
    }()

    /// POSTs `body` as the event `eventID`, signed for `timestamp` (epoch seconds); waits for the answer.
    func post(body: [UInt8], eventID: String, timestamp: Int64) -> Outcome {
        do {
            let request = try HTTPClient.Request(
                url: target, method: .POST,
                headers: [
                    "Content-Type": "application/json", "User-Agent": "BeaconMesh-Webhooks/1", "BeaconMesh-Event-Id": eventID,
                    "BeaconMesh-Timestamp": "\(timestamp)",
                    "BeaconMesh-Signature": WebhookSignature.header(secret: endpoint.secret, timestamp: timestamp, body: body),
                ], body: .bytes(body))
            let response = try client.execute(
                request: request, delegate: ResponseAccumulator(request: request, maxBodySize: answerLimit),
                eventLoop: .delegate(on: loop), deadline: .now() + .nanoseconds(timeout.nanoseconds)
            ).wait()
            let status = Int(response.status.code)
            switch status {
            case 200..<300: return .delivered(status: status)
            case 408, 429: return .failed("the receiver answered \(status)")
            case 300..<400:
                let location = response.headers.first(name: "Location").map { " to \($0)" } ?? ""
                return .failed("the receiver answered \(status) (a redirect\(location), not followed)")
            case 400..<500: return .refused(status: status)
            default: return .failed("the receiver answered \(status)")
            }
        } catch is ResponseAccumulator.ResponseTooBigError {
            return .failed("the receiver's answer was longer than \(answerLimit) bytes")
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return .failed("the receiver did not answer within \(timeout)")
        } catch {
            return .failed("\(error)")
        }
    }

    func shutdown() {
        try? client.syncShutdown()
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
