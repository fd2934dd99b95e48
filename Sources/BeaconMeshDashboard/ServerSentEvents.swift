import BeaconMeshCore
import BeaconMeshService
import BeaconMeshWire
import Hummingbird

/// A live page's channel: a `text/event-stream` response that sends the page's whole data as one JSON `data:` line
/// at once and after every change that concerns it, until the page goes away or the hub closes.
///
/// Server-sent events rather than a WebSocket: the data flows one way (the dashboard only reads), the browser's
/// `EventSource` reconnects by itself (the stream asks for a retry after 1 s), it is plain HTTP through any proxy,
/// and it needs no package beyond Hummingbird. The overview is sent at most 4 times a second; a store page at
/// every change, so an arrival shows as soon as its event or snapshot arrives.
enum ServerSentEvents {
    /// The shortest gap between two overview messages (a chain of 100 stores changes many times a second).
    static let chainInterval: Duration = .milliseconds(250)

    /// The stream of `subject`; the overview's carries only the stores in `stores`.
    static func response(hub: DashboardHub, subject: DashboardHub.Subject, stores: StoreAccess, clock: any ServiceClock) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                var photosSent: [String: Int] = [:]
                try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                for await _ in hub.changes(of: subject) {
                    let now = clock.now()
                    let json: JSONValue = hub.read { board in
                        switch subject {
                        case .chain:
                            return ChainPageData.json(board, at: now, stores: stores)
                        case .store(let store):
                            return StorePageData.json(
                                board.board(of: store), coordinator: board.coordinator(of: store), at: now,
                                photosSent: &photosSent)
                        }
                    }
                    var message = "data: "
                    message += String(decoding: WireCodec.serialize(json), as: UTF8.self)
                    message += "\n\n"
                    try await writer.write(ByteBuffer(string: message))
                    if subject == .chain { try await Task.sleep(for: chainInterval) }
                }
                try await writer.finish(nil)
            })
    }
}
