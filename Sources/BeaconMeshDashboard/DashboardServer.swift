import BeaconMeshService
import Hummingbird
import HummingbirdTLS
import Logging
import ServiceLifecycle

/// The dashboard's web server as a `Service`: Hummingbird serving `DashboardRoutes` on `listen`, over HTTPS when
/// given a `TLSConfiguration`. Run it in the same `ServiceGroup` as the `DashboardFeed`, before it (the feed is shut
/// down first and ends the live pages' streams).
public enum DashboardServer {
    /// The server; `onListening` is called with the address actually bound (the port chosen when `listen` asks for 0).
    /// With `access`, every page but `/login` and `/healthz` needs sign-in; with `survey` (`--db`) the survey page is
    /// there.
    public static func service(
        hub: DashboardHub, listen: ListenAddress, metricsText: @escaping @Sendable () -> String,
        access: DashboardAccess? = nil, tls: TLSConfiguration? = nil, analytics: AnalyticsSource? = nil,
        survey: DashboardSurvey? = nil, clock: any ServiceClock = WallClock(), logger: Logger,
        onListening: @escaping @Sendable (ListenAddress) -> Void = { _ in }
    ) throws -> any Service {
        let router = DashboardRoutes.router(
            hub: hub, metricsText: metricsText, access: access, https: tls != nil, analytics: analytics, survey: survey,
            clock: clock)
        return Application(
            router: router,
            server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
            configuration: .init(address: .hostname(listen.host, port: listen.port), serverName: "beacon-dashboard"),
            onServerRunning: { channel in
                onListening(ListenAddress(host: listen.host, port: channel.localAddress?.port ?? listen.port))
            },
            logger: logger)
    }

    /// The HTTPS configuration (TLS 1.2 or later) of a PEM certificate chain and key (as
    /// `deploy/make-certificates.sh --dashboard` makes them); an error names the file and what is wrong with it.
    public static func tlsConfiguration(certificate: String, key: String) throws(UsageError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw UsageError("cannot read the TLS certificate \(certificate): \(error)")
        }
        guard !chain.isEmpty else { throw UsageError("the TLS certificate \(certificate) holds no PEM certificate") }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw UsageError("cannot read the TLS key \(key): \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12  // as the broker's profile
        return configuration
    }
}
