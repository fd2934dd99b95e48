import Foundation
import Synchronization

/// A child process for tests: started at once, its stdout and stderr collected line by line, signalled, awaited.
///
/// Every wait has a timeout, so a test fails instead of hanging. A process still running when the `TestProcess`
/// is released is killed (SIGKILL), so a failing test leaves no children behind.
///
/// Started with `posix_spawn`, an empty signal mask and default signal dispositions — not with Foundation's `Process`:
/// children of the test runner otherwise inherit a mask that blocks almost every signal, and a program that restores
/// its inherited mask while it waits (mosquitto does) then never sees SIGTERM or SIGINT.
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
    public let processID: pid_t

    private let output: OutputBuffer

    /// Starts `executable` with `arguments`; `environment` replaces the inherited one when given. Stdin is /dev/null,
    /// or with `writableInput` a socket the test writes lines to (`write(line:)`, `closeInput()`): a socket, not a
    /// pipe, so that writing to a program that has exited fails instead of raising SIGPIPE in the test runner.
    ///
    /// Throws `TestSupportError` naming the program when it cannot be started (missing, not executable).
    public init(
        executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        currentDirectory: String? = nil, writableInput: Bool = false
    ) throws {
        let description = ([executable] + arguments).joined(separator: " ")
        guard access(executable, X_OK) == 0 else {
            throw TestSupportError("cannot start \(description): \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so children spawned by other tests do not inherit our pipe ends (pipe2 is not
        // importable; the window between pipe and fcntl is harmless here: a leak only delays end of file).
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        guard pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw TestSupportError("cannot create pipes for \(description): \(String(cString: strerror(errno)))")
        }
        var inputSockets: [Int32] = [-1, -1]
        if writableInput {
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &inputSockets) == 0 else {
                throw TestSupportError("cannot create the input socket of \(description): \(String(cString: strerror(errno)))")
            }
        }
        for descriptor in stdoutPipe + stderrPipe + inputSockets where descriptor >= 0 {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if writableInput {
            posix_spawn_file_actions_adddup2(&actions, inputSockets[1], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM] {
            sigaddset(&defaultSignals, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environmentLines =
            environment.map { $0.map { "\($0.key)=\($0.value)" } }
            ?? ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        // posix_spawn_file_actions_addchdir_np is not importable: change directory in a shell that then execs.
        let program = currentDirectory == nil ? executable : "/bin/sh"
        let argv =
            currentDirectory.map { ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, $0, executable] + arguments }
            ?? [executable] + arguments
        var pid: pid_t = 0
        let spawned = withCStringArray(argv) { argv in
            withCStringArray(environmentLines) { envp in
                posix_spawn(&pid, program, &actions, &attributes, argv, envp)
            }
        }
        close(stdoutPipe[1])
        close(stderrPipe[1])
        if writableInput { close(inputSockets[1]) }
        guard spawned == 0 else {
            close(stdoutPipe[0])
            close(stderrPipe[0])
            if writableInput { close(inputSockets[0]) }
            throw TestSupportError("cannot start \(description): \(String(cString: strerror(spawned)))")
        }

        let output = OutputBuffer()
        output.withLock { $0.input = inputSockets[0] }
        self.executable = executable
        self.arguments = arguments
        self.processID = pid
        self.output = output
        Self.collectLines(from: stdoutPipe[0], into: output) { $0.stdout.append($1) }
        Self.collectLines(from: stderrPipe[0], into: output) { $0.stderr.append($1) }
        Self.awaitExit(of: pid, into: output)
    }

    /// Reads `descriptor` on a thread of its own until end of file, appending each complete line (and a final partial one).
    private static func collectLines(
        from descriptor: Int32, into output: OutputBuffer,
        append: @escaping @Sendable (inout Output, String) -> Void
    ) {
        let thread = Thread {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: chunk[..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    output.withLock { append(&$0, line) }
                }
            }
            let last = pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
            output.withLock { output in
                if let last { append(&output, last) }
                output.openStreams -= 1
            }
            close(descriptor)
        }
        thread.start()
    }

    /// Reaps the child on a thread of its own (`waitpid`) and records how it ended.
    private static func awaitExit(of pid: pid_t, into output: OutputBuffer) {
        let thread = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                if errno != EINTR {
                    output.withLock { $0.exitStatus = .exited(-1) }
                    return
                }
            }
            // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift cannot import.
            let signal = status & 0x7F
            let exit: ExitStatus = signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
            output.withLock { $0.exitStatus = exit }
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
        await eventually(timeout: timeout) {
            self.output.withLock { output -> String? in
                switch stream {
                case .stdout: output.stdout.first(where: predicate)
                case .stderr: output.stderr.first(where: predicate)
                case .either: output.stdout.first(where: predicate) ?? output.stderr.first(where: predicate)
                }
            }
        }
    }

    /// Writes `line` and a newline to the program's input (started with `writableInput`); throws when it is closed or
    /// the program no longer reads.
    public func write(line: String) throws {
        let failure = output.withLock { output -> String? in
            guard output.input >= 0 else { return "\(executable)'s input is closed" }
            var bytes = Array(line.utf8) + [UInt8(ascii: "\n")]
            while !bytes.isEmpty {
                let sent = bytes.withUnsafeBytes { Glibc.send(output.input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return "cannot write to \(executable): \(String(cString: strerror(errno)))" }
                bytes.removeFirst(sent)
            }
            return nil
        }
        if let failure { throw TestSupportError(failure) }
    }

    /// Closes the program's input (end of file); a program reading it to its end then finishes.
    public func closeInput() {
        output.withLock { output in
            if output.input >= 0 { close(output.input) }
            output.input = -1
        }
    }

    /// Sends `signal` (e.g. `SIGINT`, `SIGTERM`, `SIGKILL`) if the process still runs.
    public func send(_ signal: Int32) {
        guard isRunning else { return }
        _ = kill(processID, signal)
    }

    /// Waits for the process to exit and for what it wrote before to be collected; `nil` if it still runs after
    /// `timeout`.
    ///
    /// The exit is reaped on one thread and the pipes read on two others, so lines written just before the exit
    /// can still be on their way when it is seen (a loaded machine showed a bad flag's error line missing): this
    /// waits for both pipes' end of file too, at most `outputGrace` (a grandchild may hold them open).
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(10)) async -> ExitStatus? {
        guard let status = await eventually(timeout: timeout, { self.exitStatus }) else { return nil }
        _ = await eventually(timeout: Self.outputGrace) { self.output.withLock { $0.openStreams == 0 } }
        return status
    }

    /// How long `waitForExit` waits, after the exit, for the output pipes to reach end of file.
    public static let outputGrace: Duration = .seconds(5)

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
        closeInput()
        // The reaper thread still holds the buffer and collects the exit status, so no zombie is left.
        if isRunning {
            _ = kill(processID, SIGKILL)
        }
    }
}

/// What a `TestProcess` has seen so far, shared with its reader and reaper threads.
private struct Output {
    var stdout: [String] = []
    var stderr: [String] = []
    var exitStatus: TestProcess.ExitStatus?
    /// The pipes (stdout, stderr) not yet read to their end.
    var openStreams = 2
    /// The test's end of the program's input socket (-1: none, or closed).
    var input: Int32 = -1
}

/// A `Mutex<Output>` in a class, so the threads' escaping closures can share it.
private final class OutputBuffer: Sendable {
    private let mutex = Mutex(Output())

    func withLock<T>(_ body: (inout Output) -> T) -> T {
        mutex.withLock { body(&$0) }
    }
}

/// Calls `body` with a NULL-terminated C array of copies of `strings`, freed afterwards.
private func withCStringArray<T>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { copies.forEach { free($0) } }
    return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
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
            || candidate.lastPathComponent == "debug" || candidate.lastPathComponent == "release"
        {
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
