import ArgumentParser
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A problem with how the program was called or configured: printed as one line, exit status 2.
public struct UsageError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Runs a command-line program the BeaconMesh way: `--help` exits 0; a bad flag, a bad config or any `UsageError`
/// prints one line naming what is wrong and exits 2; other failures print one line and exit 1.
public enum CommandLineProgram {
    /// The synchronous twin of `main`, for tools that must not start the concurrency runtime's main loop
    /// (valgrind cannot follow libdispatch's main-thread signal handling).
    public static func mainSynchronously<Command: ParsableCommand>(_ root: Command.Type, name: String) -> Never {
        let command: any ParsableCommand
        do {
            command = try root.parseAsRoot()
        } catch {
            if root.exitCode(for: error) == .success {
                printLine(root.fullMessage(for: error))
                exit(0)
            }
            fail(name, root.message(for: error), status: 2)
        }
        do {
            var synchronous = command
            try synchronous.run()
            exit(0)
        } catch let error as UsageError {
            fail(name, error.description, status: 2)
        } catch {
            if root.exitCode(for: error) == .success {
                printLine(root.fullMessage(for: error))
                exit(0)
            }
            fail(name, "\(error)", status: 1)
        }
    }

    public static func main<Command: ParsableCommand>(_ root: Command.Type, name: String) async -> Never {
        let command: any ParsableCommand
        do {
            command = try root.parseAsRoot()
        } catch {
            let code = root.exitCode(for: error)
            if code == .success {
                printLine(root.fullMessage(for: error))
                exit(0)
            }
            fail(name, root.message(for: error), status: 2)
        }
        do {
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                var synchronous = command
                try synchronous.run()
            }
            exit(0)
        } catch let error as UsageError {
            fail(name, error.description, status: 2)
        } catch let error as ExitCode {
            exit(error.rawValue)
        } catch {
            let code = root.exitCode(for: error)
            if code == .success {
                printLine(root.fullMessage(for: error))
                exit(0)
            }
            if error is ValidationError || code == .validationFailure { fail(name, root.message(for: error), status: 2) }
            fail(name, "\(error)", status: 1)
        }
    }

    private static func fail(_ name: String, _ message: String, status: Int32) -> Never {
        let line = message.split(separator: "\n").first.map(String.init) ?? message
        printError("\(name): \(line)")
        exit(status)
    }

    /// Sends log lines to standard error at `level` (the `BEACONMESH_LOG_LEVEL` environment variable wins).
    public static func bootstrapLogging(level: Logger.Level = .info) {
        var chosen = level
        if let value = getenv("BEACONMESH_LOG_LEVEL"), let parsed = Logger.Level(rawValue: String(cString: value)) {
            chosen = parsed
        }
        let effective = chosen
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = effective
            return handler
        }
    }

    /// Writes one line to standard output at once (unbuffered, so pipes and `tmux` see it immediately).
    public static func printLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
    }

    /// Writes one line to standard error.
    public static func printError(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }
}
