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

    /// Runs `body` as `blocking` does, with a fresh folder under the temporary directory for the run's files (its
    /// broker, configs, captures); the folder is removed afterwards, whether `body` succeeded or not.
    static func inWorkFolder(_ body: @escaping @Sendable (_ work: String) async throws -> Void) throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try blocking { try await body(work) }
    }
}
