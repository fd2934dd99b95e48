// Tests/BeaconMeshBLETests/SharedTestData.swift is a copy of this file: keep the two identical.
import Foundation

/// Finds the team's shared BLE test data: the repository's parent directory holds `shared/` (on the build machine
/// and in CI, where the clone has `shared/` beside it).
enum SharedTestData {
    /// `<repository>/../shared/data/ble`, or an error saying where it was looked for.
    static func bleDirectory(filePath: String = #filePath) throws -> URL {
        // <repository>/Tests/<target>/SharedTestData.swift → <repository>/..
        let repository = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = repository.deletingLastPathComponent().appendingPathComponent("shared/data/ble")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { throw MissingSharedData(path: directory.path) }
        return directory
    }

    /// The entries of `subdirectory` of the shared BLE data, sorted by name.
    static func entries(of subdirectory: String) throws -> [URL] {
        let directory = try bleDirectory().appendingPathComponent(subdirectory)
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}

/// The shared test data is not where the tests expect it: a failure, never a skip.
struct MissingSharedData: Error, CustomStringConvertible {
    var path: String
    var description: String {
        "shared BLE test data not found at \(path): the repository's parent directory must hold shared/data/ble"
    }
}
