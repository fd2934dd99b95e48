import BeaconMeshThreads
import NIOPosix

/// A thread for blocking work beside the decisions — the webhook outbox's reads and removals, the local cache's
/// writes — so that it never holds one of the concurrency pool's threads the decisions need (a one-thread
/// `NIOThreadPool`, named and at a low priority). Each user keeps one for the program's life.
final class BackgroundThread: Sendable {
    private let pool: NIOThreadPool

    init(name: String, priority: DedicatedThread.Priority) {
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        pool.submit { _ in
            DedicatedThread.nameCurrentThread(name)
            DedicatedThread.setCurrentThread(priority)
        }
    }

    /// Runs `work` there, after what was handed over before it; its result or error.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(work)
    }
}
