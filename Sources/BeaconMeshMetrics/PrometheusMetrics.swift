import Metrics
import Prometheus

/// The Prometheus backend of swift-metrics, for executables only (libraries record through swift-metrics and never
/// bootstrap): `bootstrap()` once at start, then `exposition()` is the text a scrape of `/metrics` gets.
public enum PrometheusMetrics {
    private static let registry = PrometheusCollectorRegistry()

    /// Makes every swift-metrics `Counter`, `Gauge`, … of this process a Prometheus series (names kept as given).
    public static func bootstrap() {
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    }

    /// Every series in the Prometheus text format (version 0.0.4).
    public static func exposition() -> String {
        registry.emitToString()
    }
}
