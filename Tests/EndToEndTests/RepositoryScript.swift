import BeaconMeshTesting
import Foundation

/// The repository's shell scripts (deploy/*.sh), run the way a person would run them.
enum RepositoryScript {
    /// Runs `script` (a path inside the repository) with bash and waits up to a minute; throws with its output unless
    /// it exits 0.
    @discardableResult
    static func run(_ script: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> TestProcess {
        let path = BuiltProducts.packageRoot.appendingPathComponent(script).path
        let process = try TestProcess(executable: "/bin/bash", arguments: [path] + arguments, environment: environment)
        let status = await process.waitForExit(timeout: .seconds(60))
        guard status == .exited(0) else {
            if status == nil { process.send(SIGKILL) }
            throw TestSupportError(
                "\(script) \(arguments.joined(separator: " ")) \(status.map { "\($0)" } ?? "did not finish"):\n\(process.transcript)")
        }
        return process
    }
}
