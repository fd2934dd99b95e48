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

    /// One POST to make: an event's body and its id.
    struct Post: Sendable {
        var body: [UInt8]
        var eventID: String
    }

    /// POSTs `body` to `target` as the event `eventID`, signed for `timestamp` (epoch seconds); returns once answered.
    func post(body: [UInt8], eventID: String, to target: Target, timestamp: Int64) async -> Outcome {
        let signedAt = Timestamp(milliseconds: timestamp * 1000)
        return await post([Post(body: body, eventID: eventID)], to: target, clock: { signedAt }).first ?? .failed("not sent")
    }

    /// POSTs `posts` to `target` one after another, each once the one before it was taken, stopping at the first that
    /// was not (it is tried again later, and nothing after it goes first) or, after the first, once `startBefore`
    /// passed; each is signed for the second it is sent in (`clock`). The run stays on the client's event loop, so the
    /// caller is resumed once for all of them, not twice per POST (at a backlog's pace those hops cost as much as the
    /// POSTs). Returns the outcomes of those sent, in order.
    func post(
        _ posts: [Post], to target: Target, clock: @escaping @Sendable () -> Timestamp, startBefore: NIODeadline = .distantFuture
    ) async -> [Outcome] {
        let loop = client.eventLoopGroup.next()
        let finished = loop.makePromise(of: [Outcome].self)
        loop.execute {
            self.send(posts, from: 0, outcomes: [], to: target, on: loop, clock: clock, startBefore: startBefore, finished: finished)
        }
        return (try? await finished.futureResult.get()) ?? []
    }

    /// Sends the post at `index` if it should go, and the rest after its answer; on the loop.
    private func send(
        _ posts: [Post], from index: Int, outcomes: [Outcome], to target: Target, on loop: any EventLoop,
        clock: @escaping @Sendable () -> Timestamp, startBefore: NIODeadline, finished: EventLoopPromise<[Outcome]>
    ) {
        let goOn: Bool
        switch outcomes.last {
        case .failed: goOn = false
        default: goOn = index < posts.count && (index == 0 || NIODeadline.now() < startBefore)
        }
        guard goOn else { return finished.succeed(outcomes) }
        let answer: EventLoopFuture<HTTPClient.Response>
        do {
            let request = try self.request(posts[index], to: target, timestamp: clock().milliseconds / 1000)
            answer =
                client.execute(
                    request: request, delegate: ResponseAccumulator(request: request, maxBodySize: answerLimit),
                    eventLoop: .delegate(on: loop), deadline: .now() + .nanoseconds(timeout.nanoseconds)
                ).futureResult
        } catch {
            answer = loop.makeFailedFuture(error)
        }
        answer.whenComplete { result in
            let outcome = self.outcome(of: result)
            // Through the loop's queue, not a deeper call: an answer that failed at once must not nest the next one.
            loop.execute {
                self.send(
                    posts, from: index + 1, outcomes: outcomes + [outcome], to: target, on: loop, clock: clock,
                    startBefore: startBefore, finished: finished)
            }
        }
    }

    private func request(_ post: Post, to target: Target, timestamp: Int64) throws -> HTTPClient.Request {
        var request = try HTTPClient.Request(
            url: target.endpoint.url, method: .POST,
            headers: [
                "Content-Type": "application/json", "User-Agent": "BeaconMesh-Webhooks/1", "BeaconMesh-Event-Id": post.eventID,
                "BeaconMesh-Timestamp": "\(timestamp)",
                "BeaconMesh-Signature": WebhookSignature.header(secret: target.endpoint.secret, timestamp: timestamp, body: post.body),
            ], body: .bytes(post.body))
        request.tlsConfiguration = target.tls
        return request
    }

    private func outcome(of answer: Result<HTTPClient.Response, any Error>) -> Outcome {
        switch answer {
        case .success(let response):
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
        case .failure(is ResponseAccumulator.ResponseTooBigError):
            return .failed("the receiver's answer was longer than \(answerLimit) bytes")
        case .failure(let error as HTTPClientError) where error == .deadlineExceeded || error == .readTimeout:
            return .failed("the receiver did not answer within \(timeout)")
        case .failure(let error):
            return .failed("\(error)")
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
