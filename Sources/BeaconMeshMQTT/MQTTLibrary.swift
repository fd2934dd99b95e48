import CMosquitto

/// Process-wide set-up of libmosquitto: `initialize()` runs `mosquitto_lib_init` exactly once per process.
///
/// `mosquitto_lib_init` is not thread-safe, so executables call `MQTTLibrary.initialize()` at the top of `main`,
/// before any client exists. `MQTTClient.init` calls it too, defensively; the once-guard makes that harmless.
/// `mosquitto_lib_cleanup` is never called: the library lives as long as the process.
public enum MQTTLibrary {
    /// Initialises libmosquitto if that has not happened yet in this process; cheap and safe to call again.
    public static func initialize() {
        _ = initialized
    }

    /// The version of the libmosquitto the process runs with, e.g. `2.0.11`.
    public static var version: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }

    /// A global `let` is initialised lazily and exactly once (`swift_once`), even when first touched by two threads.
    private static let initialized: Void = {
        _ = mosquitto_lib_init()
    }()
}
