import Foundation

/// Finds the team's shared BLE test data: the repository's parent directory holds `shared/` (on the build machine
/// and in CI, where the clone has `shared/` beside it).
public enum SharedTestData {
    /// `<repository>/../shared/data/ble`, or `MissingSharedData` saying where it was looked for.
    public static func bleDirectory() throws -> URL {
        let directory = BuiltProducts.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data/ble")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { throw MissingSharedData(path: directory.path) }
        return directory
    }

    /// `<repository>/../shared/data/accuracy`: the labelled recordings for presence accuracy.
    public static func accuracyDirectory() throws -> URL {
        let directory = BuiltProducts.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data/accuracy")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { throw MissingSharedData(path: directory.path) }
        return directory
    }

    /// The entries of `subdirectory` of the shared BLE data, sorted by name.
    public static func entries(of subdirectory: String) throws -> [URL] {
        let directory = try bleDirectory().appendingPathComponent(subdirectory)
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}

/// The shared test data is not where the tests expect it: a failure, never a skip.
public struct MissingSharedData: Error, CustomStringConvertible, Sendable {
    /// Where the data was looked for.
    public var path: String

    public var description: String {
        "shared test data not found at \(path): the repository's parent directory must hold shared/data"
    }
}
