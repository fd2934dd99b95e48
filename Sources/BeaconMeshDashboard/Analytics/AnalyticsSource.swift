import BeaconMeshCore
import BeaconMeshRegistry
import Dispatch

/// Where the dashboard reads history from (`--db`): the registry, used only to read. Its calls block, so each runs
/// on a thread of Dispatch's pool, never on the web server's event loop.
public struct AnalyticsSource: Sendable {
    let registry: any AnalyticsReading

    public init(registry: any AnalyticsReading) {
        self.registry = registry
    }

    /// The analytics object of `store` for `period`.
    func analytics(store: UInt16, period: AnalyticsPeriod) async throws -> StoreAnalytics {
        try await readOffTheEventLoop { [registry] in try registry.analytics(store: store, from: period.from, to: period.to) }
    }

    /// Every store's summary for `period` (the stores with history in it).
    func summaries(period: AnalyticsPeriod) async throws -> [StoreSummary] {
        try await readOffTheEventLoop { [registry] in try registry.storeSummaries(from: period.from, to: period.to) }
    }

    /// The stores the history holds anything of.
    func stores() async throws -> [UInt16] {
        try await readOffTheEventLoop { [registry] in try registry.historyStores() }
    }

    /// A failed read in an IT person's words, naming the database.
    func describe(_ error: any Error) -> String { "\(registry.location): \(registry.describe(error))" }
}

/// Runs a blocking registry read on a thread of Dispatch's pool, never on the web server's event loop.
func readOffTheEventLoop<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
