import Foundation
import Logging

/// What the config's `database:` (or `--db`) names: a SQLite file, or a chain's PostgreSQL database by URL.
public enum RegistryLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresSettings)

    /// The environment variable that may hold the PostgreSQL password.
    public static let passwordVariable = "BEACONMESH_DB_PASSWORD"

    /// Reads `text`: a `postgres://` or `postgresql://` URL names PostgreSQL, anything else a SQLite file.
    public init(_ text: String) throws(RegistryFailure) {
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            self = .postgres(try PostgresSettings(url: text))
        } else {
            guard !text.isEmpty else {
                throw RegistryFailure(.invalidLocation, "the database is empty: give a SQLite file or a postgres:// URL")
            }
            self = .sqlite(path: text)
        }
    }

    /// Opens the registry, members and store surveys (bringing its schema up to date). PostgreSQL's password comes from
    /// `passwordFile` if given, else from `BEACONMESH_DB_PASSWORD` in `environment`, else none (trust or peer
    /// authentication). With `connectingLater`, a PostgreSQL registry is not reached now but at its first use (see
    /// `PostgresRegistry.init`); a SQLite one is opened as always.
    public func open(
        passwordFile: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger = Logger(label: "beaconmesh-registry"), connectingLater: Bool = false
    ) throws(RegistryFailure) -> any MemberRegistry {
        switch self {
        case .sqlite(let path):
            return try SQLiteRegistry(path: path)
        case .postgres(let settings):
            var password = environment[Self.passwordVariable]
            if let passwordFile {
                guard let text = FileManager.default.contents(atPath: passwordFile).flatMap({ String(data: $0, encoding: .utf8) })
                else { throw RegistryFailure(.invalidLocation, "cannot read the database password file '\(passwordFile)'") }
                password = text.trimmingCharacters(in: .newlines)
            }
            return try PostgresRegistry(settings: settings, password: password, logger: logger, connectingLater: connectingLater)
        }
    }
}
