import BeaconMeshRegistry
import BeaconMeshTesting
import Foundation
import Testing

/// The two registry backends every registry test runs against.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// A new, empty database of this backend.
    func makeDatabase() throws -> TestDatabase {
        switch self {
        case .sqlite:
            return .sqlite(path: try temporaryFolder() + "/db.sqlite")
        case .postgres:
            let server = try PostgresServer.shared()
            return .postgres(server: server, url: try server.createDatabase())
        }
    }

    /// A registry on a new, empty database of this backend.
    func makeRegistry() throws -> any MemberRegistry & SurveyRegistry { try makeDatabase().open() }
}

/// One test's database, which several registries (several coordinators) may open.
enum TestDatabase {
    case sqlite(path: String)
    case postgres(server: PostgresServer, url: String)

    var location: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(_, let url): url
        }
    }

    /// A registry (a connection of its own) on this database.
    func open() throws -> any MemberRegistry & SurveyRegistry { try RegistryLocation(location).open(environment: [:]) }

    /// Everything the database keeps, to look for what should be gone: the SQLite file and its log, or every row of
    /// every table (`pg_dump --data-only`).
    func everythingStored() throws -> [(place: String, bytes: Data)] {
        switch self {
        case .sqlite(let path):
            return try [path, path + "-wal"].filter { FileManager.default.fileExists(atPath: $0) }.map {
                ($0, try Data(contentsOf: URL(fileURLWithPath: $0)))
            }
        case .postgres(let server, let url):
            let database = String(url.split(separator: "/").last ?? "")
            return [("pg_dump --data-only \(database)", Data(try server.dumpData(database: database).utf8))]
        }
    }
}

func temporaryFolder() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("beaconmesh-registry-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
