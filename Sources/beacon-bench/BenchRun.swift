import Dispatch
import Foundation
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

    /// A fresh folder under the temporary directory for one run's files (the caller removes it).
    static func makeWorkFolder() throws -> String {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        return work
    }
}
