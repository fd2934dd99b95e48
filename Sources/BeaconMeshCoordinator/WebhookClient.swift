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

    /// One POST to make: an event's body and its id.
    struct Post: Sendable {
        var body: [UInt8]
        var eventID: String
    }

    /// POSTs `body` as the event `eventID`, signed for `timestamp` (epoch seconds); waits for the answer.
    func post(body: [UInt8], eventID: String, timestamp: Int64) -> Outcome {
        let signedAt = Timestamp(milliseconds: timestamp * 1000)
        return post([Post(body: body, eventID: eventID)], clock: { signedAt }, while: { _, _ in true }).first
            ?? .failed("not sent")
    }

    /// POSTs `posts` one after another, each once the one before it was answered, while `goOn(index, outcomeBefore)`
    /// says the one at `index` should go; each is signed for the second it is sent in (`clock`). The whole run stays on
    /// the client's event loop, so the calling thread is woken once for all of them, not twice per POST (at a backlog's
    /// pace those wake-ups cost as much as the POSTs). Waits for the last; returns the outcomes of those sent, in order.
    func post(
        _ posts: [Post], clock: @escaping @Sendable () -> Timestamp, while goOn: @escaping @Sendable (Int, Outcome?) -> Bool
    ) -> [Outcome] {
        let finished = loop.makePromise(of: [Outcome].self)
        loop.execute { self.send(posts, from: 0, outcomes: [], clock: clock, goOn: goOn, finished: finished) }
        return (try? finished.futureResult.wait()) ?? []
    }

    /// Sends the post at `index` if it should go, and the rest after its answer; on the loop.
    private func send(
        _ posts: [Post], from index: Int, outcomes: [Outcome], clock: @escaping @Sendable () -> Timestamp,
        goOn: @escaping @Sendable (Int, Outcome?) -> Bool, finished: EventLoopPromise<[Outcome]>
    ) {
        guard index < posts.count, goOn(index, outcomes.last) else { return finished.succeed(outcomes) }
        let answer: EventLoopFuture<HTTPClient.Response>
        do {
            let request = try self.request(posts[index], timestamp: clock().milliseconds / 1000)
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
            self.loop.execute {
                self.send(posts, from: index + 1, outcomes: outcomes + [outcome], clock: clock, goOn: goOn, finished: finished)
            }
        }
    }

    private func request(_ post: Post, timestamp: Int64) throws -> HTTPClient.Request {
        try HTTPClient.Request(
            url: target, method: .POST,
            headers: [
                "Content-Type": "application/json", "User-Agent": "BeaconMesh-Webhooks/1", "BeaconMesh-Event-Id": post.eventID,
                "BeaconMesh-Timestamp": "\(timestamp)",
                "BeaconMesh-Signature": WebhookSignature.header(secret: endpoint.secret, timestamp: timestamp, body: post.body),
            ], body: .bytes(post.body))
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

    func shutdown() {
        try? client.syncShutdown()
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
