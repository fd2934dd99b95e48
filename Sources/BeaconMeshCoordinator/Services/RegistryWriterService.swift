import BeaconMeshRegistry
import Logging
import ServiceLifecycle
import Synchronization

/// The registry writer's thread and the local cache over the coordinator's life: the cache written as the decisions
/// hand it over; at shutdown (after the decisions queued their last changes) what is queued written, then what could
/// not be kept in the cache for the next start.
struct RegistryWriterService: Service {
    let writer: RegistryWriter
    let cache: CoordinatorCacheFile?
    let caches: CacheMailbox
    let lastCache: LastCache
    let logger: Logger

    func run() async {
        if let cache { await cache.keepWriting(from: caches, pendingIn: writer, logger: logger) }
        try? await gracefulShutdown()
        await writer.close(timeout: .seconds(5))
        guard let cache, let contents = lastCache.contents else { return }
        do {
            try cache.write(contents, pendingIn: writer)
        } catch {
            logger.error("cannot write the local cache", metadata: ["error": "\(error)"])
        }
    }
}

/// What the decisions leave for the local cache when they stop.
final class LastCache: Sendable {
    private let value = Mutex<CoordinatorCacheContents?>(nil)

    var contents: CoordinatorCacheContents? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
