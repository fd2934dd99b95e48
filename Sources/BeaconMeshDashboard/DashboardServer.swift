import BeaconMeshService
import Hummingbird
import Logging
import ServiceLifecycle

/// The dashboard's web server as a `Service`: Hummingbird serving `DashboardRoutes` on `listen`. Run it in the same
/// `ServiceGroup` as the `DashboardFeed`, before it (the feed is shut down first and ends the live pages' streams).
public enum DashboardServer {
    /// The server; `onListening` is called with the address actually bound (the port chosen when `listen` asks for 0).
    public static func service(
        hub: DashboardHub, listen: ListenAddress, metricsText: @escaping @Sendable () -> String,
        logger: Logger, onListening: @escaping @Sendable (ListenAddress) -> Void = { _ in }
    ) -> any Service {
        let router = DashboardRoutes.router(hub: hub, metricsText: metricsText)
        return Application(
            router: router,
            configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: "beacon-dashboard"),
            onServerRunning: { channel in
                onListening(ListenAddress(host: listen.host, port: channel.localAddress?.port ?? listen.port))
            },
            logger: logger)
    }
}
