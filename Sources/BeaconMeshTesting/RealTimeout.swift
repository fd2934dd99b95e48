/// Runs `operation` and returns its result, or `fallback` if it has not finished after `timeout` of real time (the
/// operation is then cancelled and must return promptly). A safety net so that a failing test fails instead of
/// hanging; a passing test never reaches the timeout.
func withRealTimeout<Result: Sendable>(
    _ timeout: Duration, otherwise fallback: Result, _ operation: @escaping @Sendable () async -> Result
) async -> Result {
    await withTaskGroup(of: Result.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return fallback
        }
        let first = await group.next() ?? fallback
        group.cancelAll()
        return first
    }
}
