import BeaconMeshCore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The registry in a chain's PostgreSQL database, shared by every store's coordinator, the `members` command and the
/// dashboard.
///
/// Why postgres-nio (vapor/postgres-nio 1.33.2, from the package mirror): it is the PostgreSQL client the Swift server
/// community maintains (the SSWG's, behind Vapor and Hummingbird), pure Swift on SwiftNIO — no libpq to link and wrap
/// — with TLS, SCRAM authentication, typed binds (`\(value)` in a query is a parameter, never pasted SQL) and
/// LISTEN/NOTIFY, which is how member changes reach every coordinator within a second. The registry's callers block
/// on their own threads, so it is used through one `PostgresSession` per registry, not a pool.
///
/// Counts are increments (`visits = visits + n`) so that stores counting at once all count; every member change is
/// announced on `PostgresSchema.channel` by triggers, whoever made it.
public final class PostgresRegistry: MemberRegistry {
    let session: PostgresSession
    let settings: PostgresSettings
    let password: String?
    let logger: Logger

    public var location: String { settings.displayURL }

    /// Connects to the database and brings its schema up to date (under an advisory lock). With `connectingLater`,
    /// nothing is asked now: the first call connects and brings the schema up to date (a coordinator starting from
    /// its local cache while the database cannot be reached), and calls fail as the database does until then.
    public init(settings: PostgresSettings, password: String?, logger: Logger, connectingLater: Bool = false) throws(RegistryFailure) {
        self.settings = settings
        self.password = password
        self.logger = logger
        let display = settings.displayURL
        session = try PostgresSession(settings: settings, password: password, logger: logger) { statements in
            do {
                try PostgresSchema.migrate(statements)
            } catch let newer as PostgresSchema.NewerSchema {
                throw RegistryFailure(
                    .newerSchema,
                    "the registry \(display) was upgraded by a newer BeaconMesh (schema version \(newer.version)); run this program's newer version with it"
                )
            }
        }
        guard !connectingLater else { return }
        do {
            try session.run { _ in }
        } catch let failure as RegistryFailure where failure.kind == .newerSchema {
            throw failure
        } catch {
            throw RegistryFailure(.unavailable, "cannot open the registry \(display): \(PostgresRegistry.describe(error))")
        }
    }

    deinit { session.close() }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    // MARK: Changes, errors

    /// Member changes announced by the database (LISTEN), on a connection of the feed's own.
    public func changeFeed() throws -> any RegistryChangeFeed {
        try PostgresChangeFeed(
            session: try PostgresSession(settings: settings, password: password, logger: logger),
            ownPID: { [session] in session.backendPID.load(ordering: .relaxed) }, logger: logger)
    }

    public func describe(_ error: any Error) -> String { Self.describe(error) }

    /// A PostgreSQL or connection failure in an IT person's words.
    static func describe(_ error: any Error) -> String {
        if let failure = error as? RegistryFailure { return failure.description }
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                let state = info[.sqlState] ?? "?"
                let message = info[.message] ?? "refused"
                switch state {
                case "28P01", "28000":
                    return
                        "the server refused the login (\(message)): check the user, databasePasswordFile or BEACONMESH_DB_PASSWORD, and pg_hba.conf"
                case "3D000":
                    return "the database does not exist (\(message))"
                case "42501":
                    return "the database role lacks a permission (\(message)): run `beacon-coordinator provision` or grant it"
                case "57P01", "57P02", "57P03":
                    return "the server is shutting down or starting up (\(message))"
                default:
                    return "the server refused: \(message) (SQLSTATE \(state))"
                }
            }
            switch error.code {
            case .connectionError:
                return "cannot connect: \(error.underlying.map { "\($0)" } ?? "connection refused")"
            case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
                return "the connection was lost (the server stopped, or the network dropped it, or it did not answer in 10 s)"
            case .sslUnsupported:
                return "the server does not offer TLS, but sslmode asks for it"
            case .failedToAddSSLHandler:
                return "TLS could not be set up: \(error.underlying.map { "\($0)" } ?? "")"
            case .authMechanismRequiresPassword:
                return "the server asks for a password: give databasePasswordFile or BEACONMESH_DB_PASSWORD"
            default:
                return "PostgreSQL client error \(error.code)\(error.underlying.map { ": \($0)" } ?? "")"
            }
        }
        if let error = error as? NIOConnectionError {
            return "cannot connect: \(error.connectionErrors.first.map { "\($0.error)" } ?? "\(error)")"
        }
        return "\(error)"
    }
}
