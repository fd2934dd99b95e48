import Foundation
import Synchronization

/// A child process for tests: started at once, its stdout and stderr collected line by line, signalled, awaited.
///
/// Every wait has a timeout, so a test fails instead of hanging. A process still running when the `TestProcess`
/// is released is killed (SIGKILL), so a failing test leaves no children behind.
public final class TestProcess: Sendable {
    /// How a process ended.
    public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(Int32)
        /// A signal ended it (e.g. `SIGKILL`).
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// Which output stream to look at.
    public enum Stream: Sendable {
        case stdout, stderr, either
    }

    /// The program's path.
    public let executable: String
    /// The arguments it was started with (without the program itself).
    public let arguments: [String]
    /// Its process id.
    public let processID: Int32

    private let output: OutputBuffer
    private let process: ProcessBox

    /// Starts `executable` with `arguments`; `environment` replaces the inherited one when given. Stdin is /dev/null.
    ///
    /// Throws `TestSupportError` naming the program when it cannot be started (missing, not executable).
    public init(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        currentDirectory: String? = nil
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice

        let output = OutputBuffer()
        process.terminationHandler = { finished in
            let status: ExitStatus = finished.terminationReason == .uncaughtSignal
                ? .signalled(finished.terminationStatus) : .exited(finished.terminationStatus)
            output.withLock { $0.exitStatus = status }
        }
        do {
            try process.run()
        } catch {
            throw TestSupportError("cannot start \(executable) \(arguments.joined(separator: " ")): \(error.localizedDescription)")
        }
        self.executable = executable
        self.arguments = arguments
        self.processID = process.processIdentifier
        self.output = output
        self.process = ProcessBox(process)

        Self.collectLines(from: stdout.fileHandleForReading, into: output) { $0.stdout.append($1) }
        Self.collectLines(from: stderr.fileHandleForReading, into: output) { $0.stderr.append($1) }
    }

    /// Reads `handle` on a thread of its own until end of file, appending each complete line (and a final partial one).
    private static func collectLines(
        from handle: FileHandle, into output: OutputBuffer,
        append: @escaping @Sendable (inout Output, String) -> Void
    ) {
        let thread = Thread {
            var pending: [UInt8] = []
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending.append(contentsOf: data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    output.withLock { append(&$0, line) }
                }
            }
            if !pending.isEmpty {
                let line = String(decoding: pending, as: UTF8.self)
                output.withLock { append(&$0, line) }
            }
            try? handle.close()
        }
        thread.start()
    }

    /// The complete lines written to stdout so far.
    public var stdoutLines: [String] { output.withLock { $0.stdout } }
    /// The complete lines written to stderr so far.
    public var stderrLines: [String] { output.withLock { $0.stderr } }
    /// Whether the process has not exited yet.
    public var isRunning: Bool { output.withLock { $0.exitStatus == nil } }
    /// How it ended, or `nil` while it runs.
    public var exitStatus: ExitStatus? { output.withLock { $0.exitStatus } }

    /// Waits for a line (already written or still to come) that satisfies `predicate`; `nil` after `timeout`.
    public func waitForLine(
        in stream: Stream = .either, timeout: Duration = .seconds(10),
        where predicate: @Sendable (String) -> Bool
    ) async -> String? {
        await poll(timeout: timeout) {
            self.output.withLock { output -> String? in
                switch stream {
                case .stdout: output.stdout.first(where: predicate)
                case .stderr: output.stderr.first(where: predicate)
                case .either: output.stdout.first(where: predicate) ?? output.stderr.first(where: predicate)
                }
            }
        }
    }

    /// Sends `signal` (e.g. `SIGINT`, `SIGTERM`, `SIGKILL`) if the process still runs.
    public func send(_ signal: Int32) {
        guard isRunning else { return }
        _ = Foundation.kill(processID, signal)
    }

    /// Waits for the process to exit; `nil` if it still runs after `timeout`.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(10)) async -> ExitStatus? {
        await poll(timeout: timeout) { self.exitStatus }
    }

    /// Sends `signal`, then waits for the exit; if it still runs after `timeout`, kills it and waits once more.
    @discardableResult
    public func stop(with signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async -> ExitStatus? {
        send(signal)
        if let status = await waitForExit(timeout: timeout) { return status }
        send(SIGKILL)
        return await waitForExit(timeout: .seconds(5))
    }

    /// All output so far, for a failure message: stdout lines, then stderr lines.
    public var transcript: String {
        output.withLock { output in
            (output.stdout.map { "out: \($0)" } + output.stderr.map { "err: \($0)" }).joined(separator: "\n")
        }
    }

    deinit {
        if isRunning {
            _ = Foundation.kill(processID, SIGKILL)
        }
    }
}

/// What a `TestProcess` has seen so far, shared with its reader threads and termination handler.
private struct Output {
    var stdout: [String] = []
    var stderr: [String] = []
    var exitStatus: TestProcess.ExitStatus?
}

/// A `Mutex<Output>` in a class, so escaping closures (reader threads, the termination handler) can share it.
private final class OutputBuffer: Sendable {
    private let mutex = Mutex(Output())

    func withLock<T>(_ body: (inout Output) -> T) -> T {
        mutex.withLock { body(&$0) }
    }
}

/// Foundation's `Process`, kept alive for its termination handler.
///
/// `@unchecked Sendable`: after `run()` the box is never read again; it exists only so the `Process` object
/// (which owns the termination handler and the pipes) lives as long as the `TestProcess`.
private final class ProcessBox: @unchecked Sendable {
    let process: Process
    init(_ process: Process) { self.process = process }
}

/// Polls `check` every 10 ms until it returns a value or `timeout` passes.
func poll<T>(timeout: Duration, interval: Duration = .milliseconds(10), _ check: () -> T?) async -> T? {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if let value = check() { return value }
        if clock.now >= deadline { return nil }
        try? await Task.sleep(for: interval)
    }
}

/// A failure of the test support itself (a missing program, a broker that would not start), with a message saying what to do.
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Finds executables that `swift build` put next to the test bundle.
public enum BuiltProducts {
    /// The directory SwiftPM builds products into (`.build/<triple>/debug`), found from the running test binary.
    public static var directory: String {
        // `swift test` on Linux runs `<products>/<Package>PackageTests.xctest`, an executable; its directory is
        // the products directory. Fall back to `.build/debug` beside the package when run some other way.
        let binary = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        var candidate = binary.deletingLastPathComponent()
        if candidate.pathExtension == "xctest" { candidate.deleteLastPathComponent() }  // a bundle directory (macOS)
        if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Modules").path)
            || candidate.lastPathComponent == "debug" || candidate.lastPathComponent == "release" {
            return candidate.path
        }
        return packageRoot.appendingPathComponent(".build/debug").path
    }

    /// The path of the executable product `name` (e.g. `beacon-scanner`); throws if it has not been built.
    public static func path(of name: String) throws -> String {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupportError("\(name) was not found at \(path); build it first with `swift build --build-tests`")
        }
        return path
    }

    /// The package's root directory: three levels above this file (`Sources/BeaconMeshTesting/TestProcess.swift`).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
