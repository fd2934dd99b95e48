import BeaconMeshCore
import Foundation
import GRDB

/// The registry in a SQLite file, through GRDB: the embedded default, one store's back office (and the demo).
///
/// Every change is one transaction; a failed import writes nothing. Opening a database made by an older version
/// upgrades it through the versioned migrations below (GRDB records which ran in `grdb_migrations`).
public final class SQLiteRegistry: MemberRegistry {
    /// A database that cannot be used, in words an IT person understands.
    public typealias Failure = RegistryFailure

    let database: DatabaseQueue
    public let path: String
    public var location: String { path }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public init(path: String) throws(RegistryFailure) {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(Double(Self.busyTimeout.wholeMilliseconds) / 1000)
        configuration.foreignKeysEnabled = true
        // Write-ahead log, synced at checkpoints: a visit count is a quick append, readers (the `members` command)
        // never block the coordinator, and a crash of the process loses nothing (a power cut may lose the last second).
        configuration.prepareDatabase { db in
            // Pages freed by the retention's deletes go back to the file system (`reclaimSpace`). Only a new file
            // takes this, and only before it turns to write-ahead logging: an older file gets a VACUUM instead.
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Deleted rows are overwritten with zeros, so `forget` leaves nothing readable behind.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        do {
            database = try SQLiteRegistry.openAndMigrate(path: path, configuration: configuration)
        } catch let failure as RegistryFailure {
            throw failure
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw Failure(
                .damaged,
                "\(path) is not a BeaconMesh database or is damaged (\(error.message ?? "corrupt")); restore it from a backup or move it away"
            )
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw Failure(.unavailable, "\(path) is locked by another program; stop it or wait, then try again")
        } catch {
            throw Failure(.unavailable, "cannot open the database \(path): \(error)")
        }
    }

    /// Opens the file and brings its schema up to date, also while other programs open the same file at once (a
    /// coordinator, the dashboard and `members` on a new file). GRDB reads which migrations ran, then runs each of the
    /// others in its own transaction, so another program may create the migrations' table or commit a migration in
    /// between, and ours then fails on what it made; a new file's switch to write-ahead logging may find the other's
    /// lock. Each is tried again from the start (reading afresh what ran) for up to `openingPatience`. A damaged file,
    /// or one a newer BeaconMesh migrated, fails at once.
    static func openAndMigrate(path: String, configuration: Configuration) throws -> DatabaseQueue {
        let deadline = ContinuousClock.now + openingPatience
        while true {
            do {
                let database = try DatabaseQueue(path: path, configuration: configuration)
                try migrate(database, path: path)
                return database
            } catch let error as DatabaseError
                where error.resultCode != .SQLITE_NOTADB && error.resultCode != .SQLITE_CORRUPT && ContinuousClock.now < deadline
            {
                Thread.sleep(forTimeInterval: Double.random(in: 0.02...0.1))
            }
        }
    }

    /// How long opening a file may wait for other programs opening it at the same moment.
    static let openingPatience: Duration = .seconds(15)

    /// Runs the migrations `database` lacks; refuses a database a newer BeaconMesh migrated (this program would not
    /// know its tables).
    static func migrate(_ database: DatabaseQueue, path: String) throws {
        let migrator = Self.migrator
        let unknown = try database.read { try migrator.appliedIdentifiers($0) }.subtracting(migrator.migrations)
        guard unknown.isEmpty else {
            throw Failure(
                .newerSchema,
                "\(path) was upgraded by a newer BeaconMesh (schema \(unknown.sorted().joined(separator: ", "))); run this program's newer version with it"
            )
        }
        try migrator.migrate(database)
    }

    public func describe(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "the database is locked by another program (SQLITE_BUSY)"
        case .SQLITE_READONLY:
            return "the database is read-only (SQLITE_READONLY): check the file's and its folder's permissions and the file system"
        case .SQLITE_FULL:
            return "the disk or the database is full (SQLITE_FULL): free space on its file system"
        case .SQLITE_IOERR:
            return
                "the database file cannot be written (SQLITE_IOERR, \(error.message ?? "disk I/O error")): check the disk, and the file's permissions and attributes"
        default:
            return "\(error.message ?? "\(error)") (\(error.resultCode))"
        }
    }
}
