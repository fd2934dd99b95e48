import BeaconMeshTesting
import Foundation

/// A dashboard users file made the way an IT person makes it: `beacon-dashboard users add`, the password on
/// standard input.
enum DashboardUsers {
    /// The test's people: a store-1 manager, a store-2 manager and head office.
    static let anna = (name: "anna", password: "anna-store-1-pass", stores: "1")
    static let bert = (name: "bert", password: "bert-store-2-pass", stores: "2")
    static let office = (name: "Head Office", password: "hq-sees-everything", stores: "all")

    /// Adds each user to `directory/users.yaml` and returns `["--users", path]`.
    static func make(in directory: String, _ users: [(name: String, password: String, stores: String)] = [anna, bert, office])
        async throws -> [String]
    {
        let path = directory + "/users.yaml"
        for user in users {
            let process = try add(user.name, password: user.password, stores: user.stores, file: path)
            let status = await process.waitForExit(timeout: .seconds(30))
            guard status == .exited(0) else { throw TestSupportError("users add \(user.name) failed: \(process.transcript)") }
        }
        return ["--users", path]
    }

    /// Starts `beacon-dashboard users add NAME --stores STORES --file FILE` with `password` (a line) on standard input.
    static func add(_ name: String, password: String, stores: String, file: String) throws -> TestProcess {
        try TestProcess(
            executable: "/bin/sh",
            arguments: [
                "-c", #"printf '%s\n' "$PASSWORD" | exec "$0" users add "$1" --stores "$2" --file "$3""#,
                try BuiltProducts.path(of: "beacon-dashboard"), name, stores, file,
            ],
            environment: ["PASSWORD": password, "PATH": "/usr/bin:/bin"])
    }
}
