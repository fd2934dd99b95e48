import BeaconMeshService

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a new password: on a terminal, asked for twice with echo off; otherwise the first line of standard input.
enum PasswordPrompt {
    static func read(for name: String) throws(UsageError) -> String {
        guard isatty(0) == 1 else {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw UsageError("no password on standard input (give it as the first line)")
            }
            return line
        }
        let first = try ask("Password for \(name): ")
        let second = try ask("Once more: ")
        guard first == second else { throw UsageError("the two passwords differ; nothing was changed") }
        return first
    }

    /// Prints `prompt` on the terminal and reads a line with echo off (restored afterwards, also on failure).
    private static func ask(_ prompt: String) throws(UsageError) -> String {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { throw UsageError("cannot read the terminal's settings to hide the password") }
        var hidden = saved
        hidden.c_lflag &= ~tcflag_t(ECHO)
        guard tcsetattr(0, TCSAFLUSH, &hidden) == 0 else { throw UsageError("cannot turn the terminal's echo off") }
        defer {
            _ = tcsetattr(0, TCSAFLUSH, &saved)
            CommandLineProgram.printError("")
        }
        let bytes = Array(prompt.utf8)
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
        guard let line = readLine(strippingNewline: true) else { throw UsageError("no password given") }
        return line
    }
}
