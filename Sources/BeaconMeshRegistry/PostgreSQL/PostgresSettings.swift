import BeaconMeshCore
import Foundation
import NIOCore
import NIOSSL
import PostgresNIO

/// Where a chain's PostgreSQL registry is and how to reach it: the config's `database:` URL
/// `postgres://USER@HOST:PORT/DB[?sslmode=require|verify-full]`. The password is never part of it.
///
/// `sslmode` means what it means to libpq: `disable` (the default) talks in clear, `require` encrypts without
/// checking the server's certificate, `verify-full` encrypts and checks the certificate and the host name against the
/// system's trusted authorities, or against `sslrootcert=FILE`.
public struct PostgresSettings: Sendable, Equatable {
    public enum TLSMode: String, Sendable {
        case disable, require
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    public var tls: TLSMode
    public var rootCertificate: String?

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    var isIPAddress: Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// The URL without secrets, for logs and health.
    public var displayURL: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// Reads a `postgres://` (or `postgresql://`) URL; a malformed one is refused in one line.
    public init(url text: String) throws(RegistryFailure) {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else { throw RegistryFailure(.invalidLocation, "'\(text)' is not a PostgreSQL URL postgres://USER@HOST:PORT/DB") }
        guard components.password == nil else {
            throw RegistryFailure(
                .invalidLocation, "the database URL must not hold a password: give it in databasePasswordFile or BEACONMESH_DB_PASSWORD")
        }
        guard let user = components.user, !user.isEmpty else {
            throw RegistryFailure(.invalidLocation, "'\(text)' names no user: postgres://USER@HOST:PORT/DB")
        }
        guard let host = components.host, !host.isEmpty else {
            throw RegistryFailure(.invalidLocation, "'\(text)' names no host: postgres://USER@HOST:PORT/DB")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw RegistryFailure(.invalidLocation, "'\(text)' names no database: postgres://USER@HOST:PORT/DB")
        }
        self.user = user.removingPercentEncoding ?? user
        self.host = host
        self.port = components.port ?? 5432
        self.database = database
        tls = .disable
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: item.value ?? "") else {
                    throw RegistryFailure(
                        .invalidLocation, "sslmode '\(item.value ?? "")' in '\(text)' must be disable, require or verify-full")
                }
                tls = mode
            case "sslrootcert":
                rootCertificate = item.value
            default:
                throw RegistryFailure(.invalidLocation, "unknown parameter '\(item.name)' in '\(text)' (sslmode and sslrootcert are known)")
            }
        }
    }

    /// The connection settings postgres-nio takes, with `password` and a `timeout` to connect.
    func configuration(password: String?, timeout: Duration) throws(RegistryFailure) -> PostgresConnection.Configuration {
        let tlsSetting: PostgresConnection.Configuration.TLS
        do {
            switch tls {
            case .disable:
                tlsSetting = .disable
            case .require:
                var client = TLSConfiguration.makeClientConfiguration()
                client.certificateVerification = .none
                tlsSetting = .require(try NIOSSLContext(configuration: client))
            case .verifyFull:
                var client = TLSConfiguration.makeClientConfiguration()
                client.certificateVerification = .fullVerification
                if let rootCertificate { client.trustRoots = .file(rootCertificate) }
                tlsSetting = .require(try NIOSSLContext(configuration: client))
            }
        } catch {
            throw RegistryFailure(.invalidLocation, "cannot set up TLS to \(displayURL): \(error)")
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tlsSetting)
        configuration.options.connectTimeout = .milliseconds(Int64(timeout.wholeMilliseconds))
        // The name checked against the certificate (and sent as SNI, which takes no IP address).
        configuration.options.tlsServerName = tls == .disable || isIPAddress ? nil : host
        return configuration
    }
}
