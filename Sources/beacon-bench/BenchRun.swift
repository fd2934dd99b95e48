import Dispatch
import Synchronization

/// Runs an asynchronous benchmark from a synchronous command: `body` on a task, the caller waiting for it; its error
/// is rethrown.
enum BenchRun {
    static func blocking(_ body: @escaping @Sendable () async throws -> Void) throws {
        let semaphore = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        Task {
            do { try await body() } catch { failure.withLock { $0 = error } }
            semaphore.signal()
        }
        semaphore.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
