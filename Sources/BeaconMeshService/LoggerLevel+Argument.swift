import ArgumentParser
import Logging

/// `--log-level trace|debug|info|notice|warning|error|critical` for every program (one conformance for all of them).
extension Logger.Level: @retroactive ExpressibleByArgument {
    /// The help of each `--log-level` already names the levels.
    public static var allValueStrings: [String] { [] }
}
