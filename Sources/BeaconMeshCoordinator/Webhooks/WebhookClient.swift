import AsyncHTTPClient
import BeaconMeshCore
import BeaconMeshThreads
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// POSTs signed bodies to webhook endpoints (async-http-client, one client for all of them): HTTPS verified against
/// the system's store or the endpoint's `cafile`, redirects not followed, an answer cut off after `timeout` or past
/// `answerLimit` bytes.
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

    /// An endpoint ready to be POSTed to: its URL checked and its `cafile` read once.
    struct Target: Sendable {
        let endpoint: WebhookEndpoint
        fileprivate let tls: TLSConfiguration?

        init(_ endpoint: WebhookEndpoint) throws {
            guard URL(string: endpoint.url) != nil else { throw HTTPClientError.invalidURL }
            self.endpoint = endpoint
            if let cafile = endpoint.cafile {
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(cafile))
                self.tls = tls
            } else {
                self.tls = nil
            }
        }
    }

    private let client: HTTPClient
    private let timeout: Duration
    private let answerLimit: Int

    /// How long a receiver may take to answer, and how much of its answer is read, before the POST counts as failed.
    static let standardTimeout: Duration = .seconds(10)
    static let standardAnswerLimit = 64 * 1024

    /// Whether the POSTs may wait for idle cores (the couriers', from the durable outbox) or are awaited by a person
    /// (`webhooks test`).
    enum Urgency: Sendable {
        case now
        case whenIdle
    }

    init(urgency: Urgency = .now, timeout: Duration = standardTimeout, answerLimit: Int = standardAnswerLimit) {
        self.timeout = timeout
        self.answerLimit = answerLimit
        let seconds = Int64(timeout.components.seconds)
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: .makeClientConfiguration(), redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(min(seconds, 5)), read: .seconds(seconds)))
        configuration.httpVersion = .http1Only
        configuration.decompression = .disabled
        let loop = urgency == .whenIdle ? Self.idleLoop : MultiThreadedEventLoopGroup.singleton.next()
        client = HTTPClient(eventLoopGroupProvider: .shared(loop), configuration: configuration)
    }

    /// The event loop the couriers' requests and connections run on: one thread at idle priority, so that on busy
    /// cores webhooks yield to the decisions and their events. Lives as long as the program.
    private static let idleLoop: any EventLoop = {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()
        try? loop.submit { DedicatedThread.setCurrentThread(.idle) }.wait()
        return loop
    }()

    /// POSTs `body` to `target` as the event `eventID`, signed for `timestamp` (epoch seconds); returns once answered.
    func post(body: [UInt8], eventID: String, to target: Target, timestamp: Int64) async -> Outcome {
        var request = HTTPClientRequest(url: target.endpoint.url)
        request.method = .POST
        request.headers = [
            "Content-Type": "application/json", "User-Agent": "BeaconMesh-Webhooks/1", "BeaconMesh-Event-Id": eventID,
            "BeaconMesh-Timestamp": "\(timestamp)",
            "BeaconMesh-Signature": WebhookSignature.header(secret: target.endpoint.secret, timestamp: timestamp, body: body),
        ]
        request.body = .bytes(body)
        request.tlsConfiguration = target.tls
        do {
            let response = try await client.execute(request, deadline: .now() + .nanoseconds(timeout.nanoseconds))
            // Read (up to the limit) so that the connection can carry the next POST.
            _ = try await response.body.collect(upTo: answerLimit)
            return Self.outcome(of: response)
        } catch is NIOTooManyBytesError {
            return .failed("the receiver's answer was longer than \(answerLimit) bytes")
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return .failed("the receiver did not answer within \(timeout)")
        } catch {
            return .failed("\(error)")
        }
    }

    private static func outcome(of response: HTTPClientResponse) -> Outcome {
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
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
