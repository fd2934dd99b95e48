import Hummingbird
import Logging
import ServiceLifecycle

/// A `Service` serving the process's Prometheus metrics as text at `GET /metrics` on `host:port` (the coordinator's
/// `metrics:` key); every other path is a 404.
public enum MetricsServer {
    public static func service(
        host: String, port: Int, logger: Logger,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> any Service {
        let router = Router(context: BasicRequestContext.self)
        MetricsRoute.add(to: router)
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "beaconmesh-metrics"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) }, logger: logger)
    }
}
