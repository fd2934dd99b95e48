import Hummingbird

/// The one `GET /metrics` route: Prometheus's text exposition format, served by the coordinator's metrics server and
/// the dashboard alike.
public enum MetricsRoute {
    /// The exposition format's media type.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Adds `GET /metrics` to `router`, answering with `exposition()` (by default this process's metrics).
    public static func add<Context: RequestContext>(
        to router: Router<Context>, exposition: @escaping @Sendable () -> String = PrometheusMetrics.exposition
    ) {
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = contentType
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: exposition())))
        }
    }
}
