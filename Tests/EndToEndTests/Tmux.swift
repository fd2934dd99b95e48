import BeaconMeshTesting
import Foundation

/// A detached `tmux` session on a server of its own (`tmux -L <socket>`), for driving a full-screen program the way a
/// person at a terminal would: type keys, resize the window, read the screen (with colours, if asked).
///
/// Every test gets its own socket, so tests never see each other's sessions; `kill()` ends the server and everything
/// running in it. tmux runs with no config file (`-f /dev/null`) and in UTF-8 mode (`-u`, `LANG=C.UTF-8`).
final class TmuxSession: Sendable {
    /// The socket name given to `-L`.
    let socket: String
    /// The session's target name.
    let target = "test"

    private let environment: [String: String]

    /// Starts a server with one session `columns`×`rows` that runs `command` through the shell.
    init(socket: String, columns: Int, rows: Int, command: String) async throws {
        self.socket = "\(socket)-\(getpid())"
        var environment = ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"]
        for name in ["PATH", "HOME", "TMPDIR"] {
            if let value = ProcessInfo.processInfo.environment[name] { environment[name] = value }
        }
        self.environment = environment
        _ = try await run(["new-session", "-d", "-s", target, "-x", "\(columns)", "-y", "\(rows)", command])
    }

    /// Runs one tmux command against this server and returns its standard output lines.
    @discardableResult
    func run(_ arguments: [String]) async throws -> [String] {
        let tmux = try Self.executable()
        let process = try TestProcess(
            executable: tmux, arguments: ["-u", "-f", "/dev/null", "-L", socket] + arguments, environment: environment)
        let status = await process.waitForExit(timeout: .seconds(10))
        guard status == .exited(0) else {
            if status == nil { process.send(SIGKILL) }
            throw TestSupportError(
                "tmux \(arguments.joined(separator: " ")) \(status.map { "\($0)" } ?? "did not finish"):\n\(process.transcript)")
        }
        return process.stdoutLines
    }

    /// The visible screen, one line per row; with `colours`, SGR escape sequences mark colours and attributes.
    func screen(colours: Bool = false) async throws -> String {
        try await run(["capture-pane", "-p", "-t", target] + (colours ? ["-e"] : [])).joined(separator: "\n")
    }

    /// Polls the screen until `predicate` holds and returns it; throws with the last screen after `timeout`.
    @discardableResult
    func waitForScreen(
        _ description: String, colours: Bool = false, timeout: Duration = .seconds(10),
        where predicate: (String) -> Bool
    ) async throws -> String {
        var last = ""
        var failure: (any Error)?
        let shown = await eventually(timeout: timeout, interval: .milliseconds(50)) { () async -> String? in
            do {
                last = try await screen(colours: colours)
            } catch {
                failure = error
                return ""
            }
            return predicate(last) ? last : nil
        }
        if let failure { throw failure }
        if let shown { return shown }
        throw TestSupportError("the screen never showed \(description) within \(timeout); it showed:\n\(last)")
    }

    /// Types `keys` (tmux key names: `q`, `C-c`, `Enter`).
    func sendKeys(_ keys: String...) async throws {
        try await run(["send-keys", "-t", target] + keys)
    }

    /// Resizes the window, as dragging the terminal's corner would.
    func resize(columns: Int, rows: Int) async throws {
        try await run(["resize-window", "-t", target, "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// Ends the server and every program running in it, and removes its socket file.
    func kill() async {
        _ = try? await run(["kill-server"])
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        try? FileManager.default.removeItem(atPath: "\(directory)/tmux-\(getuid())/\(socket)")
    }

    private static func executable() throws -> String {
        let candidates = ["/usr/bin/tmux", "/usr/local/bin/tmux"]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestSupportError("tmux was not found in /usr/bin or /usr/local/bin; install it (apt-get install tmux)")
        }
        return found
    }
}

/// Reading what tmux captured.
enum ScreenText {
    /// `text` quoted for `sh`.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The first line of `screen` containing `text`.
    static func line(containing text: String, in screen: String) -> String? {
        screen.split(separator: "\n", omittingEmptySubsequences: false).first { $0.contains(text) }.map(String.init)
    }

    /// The terminal column where `text` starts in `line` (East Asian wide characters count two), or `nil`.
    static func column(of text: String, in line: String) -> Int? {
        guard let range = line.range(of: text) else { return nil }
        return line[..<range.lowerBound].unicodeScalars.reduce(0) { $0 + (isWide($1) ? 2 : 1) }
    }

    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value) || (0xAC00...0xD7A3).contains(value)
            || (0xF900...0xFAFF).contains(value) || (0xFF00...0xFF60).contains(value) || (0x20000...0x3FFFD).contains(value)
    }
}
